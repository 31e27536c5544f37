#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "core/error.h"

namespace websd {
namespace {

// What a file that cannot be mapped is, for "<path>: is a folder, expected a file".
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device";
  if (S_ISFIFO(mode)) return "is a pipe";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before fstat could refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int saved = errno;
    const char* fix = saved == ENOENT  ? " (check the path)"
                      : saved == ELOOP ? " (a symbolic link loop: fix the link)"
                                       : "";
    throw Error("file", path + ": cannot open: " + std::strerror(saved) + fix);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    throw Error("file", path + ": cannot stat: " + std::strerror(saved));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw Error("file", path + ": " + file_kind(info.st_mode) + ", expected a file");
  }
  if (static_cast<std::uint64_t>(info.st_size) > std::numeric_limits<std::size_t>::max()) {
    ::close(fd);
    throw Error("file", path + ": " + std::to_string(info.st_size) + " bytes is too large to map on this platform");
  }
  size_ = static_cast<std::size_t>(info.st_size);
  if (size_ > 0) {
    void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      throw Error("file", path + ": cannot map " + std::to_string(size_) + " bytes: " + std::strerror(saved));
    }
    data_ = static_cast<const std::byte*>(mapping);
  }
  ::close(fd);  // the mapping keeps the file alive
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release_pages(std::size_t offset, std::size_t length) const noexcept {
#ifdef MADV_DONTNEED
  if (data_ == nullptr || offset >= size_) return;
  length = std::min(length, size_ - offset);
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  // Every page the range touches, boundary pages included: dropping a page that also holds
  // neighbouring bytes is harmless (it is read again if touched), and leaving boundary pages
  // behind would let a caller that streams in small chunks accumulate one page per chunk.
  const auto begin = reinterpret_cast<std::uintptr_t>(data_ + offset) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(data_ + offset + length);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
#else
  (void)offset;
  (void)length;
#endif
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace websd
