// An artifact's files as the JavaScript host gives them (web_host_imports.h): the wasm runtime's
// ArtifactSource in a browser (files fetched, verified and cached by the page) and under Node
// (read from the folder). Every read copies the whole file into wasm memory; the Artifact verifies
// it and releases shards after use, so about one shard is held at a time. No local paths, no
// memory maps. Not thread-safe (the wasm runtime is single-threaded).
#pragma once

#include "artifact/artifact_source.h"

namespace websd::web {

class JsArtifactSource final : public artifact::ArtifactSource {
 public:
  // Throws websd::Error("web") when the host provides no files.
  JsArtifactSource();

  std::string describe() const override { return describe_; }
  std::optional<std::uint64_t> size(std::string_view relative_path) const override;
  std::vector<std::byte> read(std::string_view relative_path) const override;
  // The host's digest of the last read (Node hashes natively as it reads; a page gives the digest
  // its cache was keyed and checked by), when it has one.
  std::optional<artifact::Sha256Digest> read_digest(std::string_view relative_path) const override;

 private:
  std::string describe_;
};

}  // namespace websd::web
