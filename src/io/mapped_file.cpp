#include "io/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "core/error.h"
#include "io/input_file.h"

namespace websd {

MappedFile::MappedFile(const std::string& path, const InputKind& kind) : path_(path) {
  const InputFile file("file", path, kind);
  if (file.size() > std::numeric_limits<std::size_t>::max()) {
    throw Error("file", path + ": " + std::to_string(file.size()) + " bytes is too large to map on this platform");
  }
  size_ = static_cast<std::size_t>(file.size());
  if (size_ > 0) {
    void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.descriptor(), 0);
    if (mapping == MAP_FAILED) {
      const int saved = errno;
      throw Error("file", path + ": cannot map " + std::to_string(size_) + " bytes: " + std::strerror(saved));
    }
    data_ = static_cast<const std::byte*>(mapping);  // it keeps the file alive once `file` closes
  }
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
