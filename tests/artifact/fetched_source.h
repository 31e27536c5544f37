// An ArtifactSource that reads an artifact folder the way a browser fetches files: whole files,
// never memory-mapped, with no local paths; it counts the reads of each file, so tests can see
// that shards are streamed one at a time, and can report digests of what it read as a host that
// hashes natively does. Thread-safe once set up.
#pragma once

#include <functional>
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
  // As a host that hashes what it reads would, when set: `digest_of` gives the digest to report
  // for a file (nullopt: none, the runtime hashes).
  std::optional<artifact::Sha256Digest> read_digest(std::string_view relative_path) const override {
    return digest_of_ ? digest_of_(std::string(relative_path)) : std::nullopt;
  }
  void set_digests(std::function<std::optional<artifact::Sha256Digest>(const std::string&)> digest_of) {
    digest_of_ = std::move(digest_of);
  }

 private:
  artifact::FolderSource folder_;
  std::shared_ptr<Reads> reads_;
  std::function<std::optional<artifact::Sha256Digest>(const std::string&)> digest_of_;
};

}  // namespace websd::test
