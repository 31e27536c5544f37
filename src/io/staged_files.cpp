#include "io/staged_files.h"

#include <unistd.h>

#include <filesystem>

#include "core/error.h"

namespace websd {

StagedFiles::~StagedFiles() {
  for (const Staged& file : staged_) {
    std::error_code ignored;
    std::filesystem::remove(file.temp, ignored);
  }
}

std::string StagedFiles::stage(const std::string& path) {
  std::string temp = path + ".websd-partial-" + std::to_string(::getpid()) + "-" + std::to_string(staged_.size());
  staged_.push_back({temp, path, std::make_unique<CleanupOnInterrupt>(temp)});
  return temp;
}

void StagedFiles::commit() {
  for (const Staged& file : staged_) {
    std::error_code error;
    std::filesystem::rename(file.temp, file.path, error);
    if (error) throw Error(component_, file.path + ": cannot move the finished file into place: " + error.message());
  }
  staged_.clear();
}

}  // namespace websd
