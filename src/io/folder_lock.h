// Folders that a running websd owns, told apart from the ones a killed websd left: the owner holds
// an exclusive flock on the folder itself for as long as it uses it. The kernel drops the lock when
// the process ends however it ends (SIGKILL included), so a folder whose lock another process can
// take was abandoned, and remove_abandoned_folders() may delete it; a live owner's folder is never
// touched. Used for a build's staging folder (ART.websd-partial-*) and its compiler scratch folder
// (/tmp/websd-build-*). Not thread-safe: one owner per folder.
#pragma once

#include <string>
#include <vector>

namespace websd {

class FolderLock {
 public:
  FolderLock() = default;  // holds nothing
  // Creates a fresh folder from `pattern` (mkdtemp: it ends in "XXXXXX") and locks it. Throws
  // websd::Error(component, ...) naming the folder and the cause when it cannot.
  static FolderLock create(const std::string& pattern, const std::string& component);
  ~FolderLock();  // releases the lock; the folder stays
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  FolderLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// Removes every folder in `parent` whose name starts with `prefix` and whose lock no live process
// holds; returns the paths removed. A folder that cannot be opened or removed (another user's) is
// left as it is.
std::vector<std::string> remove_abandoned_folders(const std::string& parent, const std::string& prefix);

}  // namespace websd
