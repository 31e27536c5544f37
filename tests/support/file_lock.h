// Cross-process test helper: an exclusive flock, so test processes that ctest runs side by side
// build a shared fixture (an artifact, a model) once.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

namespace websd::test {

// Holds an exclusive flock on `file` (created if missing) for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& file) : fd_(::open(file.c_str(), O_CREAT | O_RDWR, 0600)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + file.string());
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace websd::test
