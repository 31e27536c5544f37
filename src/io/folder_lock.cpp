#include "io/folder_lock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

// `fd` is still the folder at `path` (a sweep may have removed the folder before its lock was taken).
bool still_at(int fd, const std::string& path) {
  struct stat opened {
  }, named{};
  return ::fstat(fd, &opened) == 0 && ::lstat(path.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
         opened.st_ino == named.st_ino;
}

int open_folder(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

}  // namespace

FolderLock FolderLock::create(const std::string& pattern, const std::string& component) {
  // Another process's sweep can take a folder between its creation and its lock: then make another.
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string path = pattern;
    if (::mkdtemp(path.data()) == nullptr) {
      throw Error(component, fs::path(pattern).parent_path().string() + ": cannot create a folder in it: " +
                                 std::strerror(errno) + " (check that the folder exists and is writable)");
    }
    const int fd = open_folder(path);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 && still_at(fd, path)) return FolderLock(std::move(path), fd);
    if (fd >= 0) ::close(fd);
  }
  throw Error(component, pattern + ": cannot create and lock a folder (other processes keep removing it)");
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

FolderLock::FolderLock(FolderLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

std::vector<std::string> remove_abandoned_folders(const std::string& parent, const std::string& prefix) {
  std::vector<std::string> removed;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory(error) || entry.is_symlink(error)) continue;
    const std::string path = entry.path().string();
    const int fd = open_folder(path);
    if (fd < 0) continue;
    // Held while removing, so that the folder's owner, if it is only now taking its lock, finds it gone.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && still_at(fd, path)) {
      std::error_code ignored;
      fs::remove_all(path, ignored);
      if (!fs::exists(fs::symlink_status(path, ignored))) removed.push_back(path);
    }
    ::close(fd);
  }
  return removed;
}

}  // namespace websd
