// A folder written in full or not at all: everything goes into a staging sibling
// (<out>.tmp-<pid>) that commit() renames to the destination, so an interrupted or failed writer
// leaves no partial folder (the destructor removes an uncommitted staging folder). An existing
// destination is refused when it is a file, or a non-empty folder unless `replace`; a replaced
// folder is moved aside first and removed only after the new one is in place. A destination that is a
// symbolic link is refused; the staging folder is removed on an interrupt (interrupt_cleanup.h).
// Not thread-safe; one writer per destination.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "io/interrupt_cleanup.h"

namespace websd {

class StagedFolder {
 public:
  // `component` prefixes errors ("[make-model] ..."). Throws websd::Error for an empty or refused
  // destination, or a staging folder that cannot be created.
  StagedFolder(const std::string& out, bool replace, std::string component);
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Where to write until commit().
  const std::filesystem::path& path() const { return staging_; }
  const std::filesystem::path& destination() const { return out_; }
  // Creates `dir` (and parents); throws websd::Error naming it.
  void create(const std::filesystem::path& dir) const;
  void commit();

 private:
  std::filesystem::path out_;
  std::filesystem::path staging_;
  std::string component_;
  bool committed_ = false;
  std::unique_ptr<CleanupOnInterrupt> cleanup_;
};

}  // namespace websd
