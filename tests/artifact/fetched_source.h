// An ArtifactSource that reads an artifact folder the way a browser fetches files: whole files,
// never memory-mapped, with no local paths; it counts the reads of each file, so tests can see
// that shards are streamed one at a time. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "artifact/artifact_source.h"

namespace websd::test {

class FetchedSource final : public artifact::ArtifactSource {
 public:
  struct Reads {
    std::mutex mutex;
    std::map<std::string, int, std::less<>> count;  // by relative path
  };

  FetchedSource(const std::string& dir, std::shared_ptr<Reads> reads) : folder_(dir), reads_(std::move(reads)) {}

  std::string describe() const override { return "fetched:" + folder_.describe(); }
  std::optional<std::uint64_t> size(std::string_view relative_path) const override {
    return folder_.size(relative_path);
  }
  std::vector<std::byte> read(std::string_view relative_path) const override {
    {
      const std::lock_guard lock(reads_->mutex);
      ++reads_->count[std::string(relative_path)];
    }
    return folder_.read(relative_path);
  }

 private:
  artifact::FolderSource folder_;
  std::shared_ptr<Reads> reads_;
};

}  // namespace websd::test
