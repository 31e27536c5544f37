#include "io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace websd {
namespace {

// "4 MiB" for the caps (powers of two), else the bytes.
std::string byte_size_text(std::uint64_t bytes) {
  for (const auto& [shift, unit] : {std::pair{30, " GiB"}, std::pair{20, " MiB"}, std::pair{10, " KiB"}}) {
    if (bytes >= (std::uint64_t{1} << shift) && bytes % (std::uint64_t{1} << shift) == 0) {
      return std::to_string(bytes >> shift) + unit;
    }
  }
  return std::to_string(bytes) + " bytes";
}

// What a path that is not a regular file is, for "<path>: is a FIFO, expected ...".
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder";
  if (S_ISFIFO(mode)) return "is a FIFO";
  if (S_ISSOCK(mode)) return "is a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device";
  return "is not a regular file";
}

[[noreturn]] void fail_too_large(const std::string& component, const std::string& where, const std::string& holds,
                                 const InputKind& kind) {
  throw Error(component, where + ": holds " + holds + " bytes, over websd's cap of " + byte_size_text(kind.max_bytes) +
                             " for " + std::string(kind.name) + " (no real one is that large: check the path)");
}

struct Opened {
  int fd;
  std::uint64_t size;
};

[[noreturn]] void fail_not_regular(const std::string& component, const std::string& where, mode_t mode,
                                   const InputKind& kind, bool stdin_allowed) {
  const std::string expected = ", expected " + std::string(kind.name);
  if (S_ISDIR(mode)) throw Error(component, where + ": is a folder" + expected + " (pass the file itself)");
  throw Error(component, where + ": " + file_kind(mode) + expected +
                             " (websd reads regular files only, so that no input can block it: save the data "
                             "to a file and pass that" +
                             (stdin_allowed ? ", or pass - to read standard input)" : ")"));
}

Opened open_checked(const std::string& component, const std::string& path, const InputKind& kind,
                    const std::string& where, bool stdin_allowed) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before fstat could refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int saved = errno;
    // A socket cannot be opened at all (ENXIO): named for what it is, as fstat would.
    struct stat info {};
    if (saved == ENXIO && ::stat(path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode)) {
      fail_not_regular(component, where, info.st_mode, kind, stdin_allowed);
    }
    throw Error(component, where + ": cannot open: " + std::strerror(saved) + " (" + file_error_fix(saved) + ")");
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    throw Error(component, where + ": cannot stat: " + std::strerror(saved) + " (" + file_error_fix(saved) + ")");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    fail_not_regular(component, where, info.st_mode, kind, stdin_allowed);
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > kind.max_bytes) {
    ::close(fd);
    fail_too_large(component, where, std::to_string(size), kind);
  }
  // A regular file never blocks; reads are made blocking again all the same (portable semantics).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return {fd, size};
}

std::string where_of(const std::string& role, const std::string& path) {
  return role.empty() ? path : role + " " + path;
}

}  // namespace

std::string file_error_fix(int error_number) {
  switch (error_number) {
    case ENAMETOOLONG:
      return "a name in the path is too long: at most 255 bytes per name, shorten it";
    case ELOOP:
      return "a symbolic link loop: remove or fix the link";
    case ENOENT:
      return "check that the path exists";
    case EACCES:
    case EPERM:
      return "check the permissions";
    case EISDIR:
      return "it is a folder: pass a file";
    case ENOTDIR:
      return "a part of the path is a file, not a folder";
    case ENOSPC:
      return "the disk is full: free space";
    case EROFS:
      return "the file system is read-only: choose another path";
    default:
      return "check the path";
  }
}

InputFile::InputFile(std::string component, const std::string& path, const InputKind& kind, std::string role)
    : component_(std::move(component)), kind_(kind), where_(where_of(role, path)) {
  const Opened opened = open_checked(component_, path, kind, where_, false);
  fd_ = opened.fd;
  size_ = opened.size;
}

InputFile::InputFile(std::string component, int fd, bool owned, std::uint64_t size, const InputKind& kind,
                     std::string where)
    : component_(std::move(component)), fd_(fd), owned_(owned), size_(size), kind_(kind), where_(std::move(where)) {}

InputFile::~InputFile() { close(); }

InputFile::InputFile(InputFile&& other) noexcept
    : component_(std::move(other.component_)),
      fd_(std::exchange(other.fd_, -1)),
      owned_(other.owned_),
      size_(other.size_),
      kind_(other.kind_),
      where_(std::move(other.where_)) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    close();
    component_ = std::move(other.component_);
    fd_ = std::exchange(other.fd_, -1);
    owned_ = other.owned_;
    size_ = other.size_;
    kind_ = other.kind_;
    where_ = std::move(other.where_);
  }
  return *this;
}

void InputFile::close() noexcept {
  if (fd_ >= 0 && owned_) ::close(fd_);
  fd_ = -1;
}

template <typename Buffer>
Buffer InputFile::read_into() {
  // Sized from fstat (capped already), then read to the end: a file may be shorter or longer by now,
  // and standard input or a /proc file has no size in advance. Reads past the expected size land in
  // `spill` first, so that a file of exactly its size is never copied to grow the buffer.
  Buffer buffer;
  buffer.resize(static_cast<std::size_t>(size_));
  std::size_t done = 0;
  char spill[4096];
  for (;;) {
    const bool full = done == buffer.size();
    char* into = full ? spill : reinterpret_cast<char*>(buffer.data()) + done;
    const std::size_t got = read_some(into, full ? sizeof spill : buffer.size() - done);
    if (got == 0) break;
    if (done + got > kind_.max_bytes) {
      fail_too_large(component_, where_, "more than " + std::to_string(kind_.max_bytes), kind_);
    }
    if (full) {
      const std::uint64_t grown = std::min<std::uint64_t>(done + done / 2 + sizeof spill, kind_.max_bytes);
      buffer.resize(static_cast<std::size_t>(std::max<std::uint64_t>(grown, done + got)));
      std::memcpy(reinterpret_cast<char*>(buffer.data()) + done, spill, got);
    }
    done += got;
  }
  buffer.resize(done);
  return buffer;
}

std::size_t InputFile::read_some(char* into, std::size_t count) {
  for (;;) {
    const ssize_t got = ::read(fd_, into, count);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    const int saved = errno;
    throw Error(component_, where_ + ": read failed: " + std::strerror(saved) + " (" + file_error_fix(saved) + ")");
  }
}

std::string InputFile::read_all() { return read_into<std::string>(); }

std::vector<std::byte> InputFile::read_all_bytes() { return read_into<std::vector<std::byte>>(); }

std::string InputFile::read_prefix(std::size_t count) {
  std::string prefix(count, '\0');
  std::size_t done = 0;
  while (done < count) {
    const std::size_t got = read_some(prefix.data() + done, count - done);
    if (got == 0) break;
    done += got;
  }
  prefix.resize(done);
  return prefix;
}

std::string input_file_read(const std::string& component, const std::string& path, const InputKind& kind,
                            const std::string& role) {
  return InputFile(component, path, kind, role).read_all();
}

std::string input_file_read_or_stdin(const std::string& component, const std::string& path, const InputKind& kind,
                                     const std::string& role) {
  if (path == "-") {
    return InputFile(component, STDIN_FILENO, false, 0, kind, where_of(role, "- (standard input)")).read_all();
  }
  const std::string where = where_of(role, path);
  const Opened opened = open_checked(component, path, kind, where, true);
  return InputFile(component, opened.fd, true, opened.size, kind, where).read_all();
}

}  // namespace websd
