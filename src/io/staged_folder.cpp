#include "io/staged_folder.h"

#include <unistd.h>

#include "core/error.h"

namespace websd {

namespace fs = std::filesystem;

StagedFolder::StagedFolder(const std::string& out, bool replace, std::string component)
    : component_(std::move(component)) {
  out_ = fs::path(out).lexically_normal();
  if (!out_.has_filename()) out_ = out_.parent_path();
  if (out_.empty()) throw Error(component_, "--out is empty (pass the folder to write)");
  std::error_code error;
  const auto status = fs::symlink_status(out_, error);
  if (fs::is_symlink(status)) {
    throw Error(component_, out_.string() + ": is a symbolic link; websd does not write through links");
  }
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) throw Error(component_, out_.string() + ": exists and is not a folder");
    if (!fs::is_empty(out_, error) && !replace) {
      throw Error(component_, out_.string() + ": folder is not empty (pass --force to replace it)");
    }
  }
  if (out_.has_parent_path()) create(out_.parent_path());
  staging_ = out_.string() + ".tmp-" + std::to_string(::getpid());
  cleanup_ = std::make_unique<CleanupOnInterrupt>(staging_.string());
  fs::remove_all(staging_, error);
  create(staging_);
}

StagedFolder::~StagedFolder() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
}

void StagedFolder::create(const fs::path& dir) const {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw Error(component_, dir.string() + ": cannot create folder: " + error.message());
}

void StagedFolder::commit() {
  std::error_code error;
  const fs::path previous = out_.string() + ".old-" + std::to_string(::getpid());
  const bool replace = fs::exists(out_, error);
  if (replace) {
    fs::rename(out_, previous, error);
    if (error) throw Error(component_, out_.string() + ": cannot move the old folder aside: " + error.message());
  }
  fs::rename(staging_, out_, error);
  if (error) {
    if (replace) fs::rename(previous, out_, error);
    throw Error(component_, out_.string() + ": cannot move the new folder into place: " + error.message());
  }
  committed_ = true;
  if (replace) fs::remove_all(previous, error);
}

}  // namespace websd
