// Several output files written all or none: each is written to a temporary sibling first
// (stage()), and commit() renames them all into place once every one is complete. Until then the
// destinations keep their old content; the destructor (an error) and an interrupt
// (interrupt_cleanup.h) remove the temporaries. Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/interrupt_cleanup.h"

namespace websd {

class StagedFiles {
 public:
  explicit StagedFiles(std::string component) : component_(std::move(component)) {}
  ~StagedFiles();
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  // The temporary path to write `path`'s content to.
  std::string stage(const std::string& path);
  // Throws websd::Error naming the file that could not be renamed into place.
  void commit();

 private:
  struct Staged {
    std::string temp;
    std::string path;
    std::unique_ptr<CleanupOnInterrupt> cleanup;
  };
  std::string component_;
  std::vector<Staged> staged_;
};

}  // namespace websd
