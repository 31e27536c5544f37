// Writes an artifact directory (see FORMAT.md): sections of the manifest, weight tensors packed
// into shards with a SHA-256 each (optionally AES-256-GCM encrypted), then the index, the
// manifest and its seal (digest, HMAC when encrypted, signature when signed). Everything goes to a staging directory
// beside the destination that is renamed into place by finish(), so a build that fails or is interrupted never leaves
// something that loads as an artifact; an abandoned writer removes its staging directory. The destination may be
// absent, empty or a previous artifact (replaced); any other existing path is refused.
// Used by the compiler; one writer owns one build and is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "artifact/artifact_key.h"
#include "artifact/artifact_manifest.h"
#include "artifact/artifact_signing_key.h"
#include "artifact/weight_index.h"
#include "artifact/weight_shard_writer.h"
#include "io/folder_lock.h"
#include "io/interrupt_cleanup.h"

namespace websd::artifact {

struct ArtifactWriterOptions {
  std::uint64_t shard_limit_bytes = kDefaultShardLimitBytes;
  // When set, weight shards are encrypted with AES-256-GCM and the manifest authenticated by its HMAC.
  std::optional<ArtifactKey> key;
  // When set, the seal carries this key's Ed25519 signature of the manifest.
  std::shared_ptr<const ArtifactSigningKey> signing_key;
};

// Removes the staging directories that writers of `dir` left when they were killed (their lock is
// free); a live writer's is kept. Returns the paths removed.
std::vector<std::string> remove_abandoned_staging(const std::string& dir);

class ArtifactWriter {
 public:
  // Checks the destination and creates the staging directory. Throws websd::Error("artifact", ...)
  // for a destination that exists and is neither empty nor an artifact, or a zero shard limit.
  ArtifactWriter(std::string dir, std::string target, ArtifactWriterOptions options = {});
  ~ArtifactWriter();
  ArtifactWriter(const ArtifactWriter&) = delete;
  ArtifactWriter& operator=(const ArtifactWriter&) = delete;

  // Sets (or replaces) a named section; its content is opaque to the container. "weights" is
  // reserved for the container itself.
  void set_section(const std::string& name, nlohmann::json content);
  // Appends a tensor: `bytes` is its little-endian data, exactly numel x dtype size. dtype is
  // f32, f16 or bf16; names are unique.
  void add_weight(const std::string& name, const Shape& shape, DType dtype, std::span<const std::byte> bytes);
  // Adds a file at `relative_path` (letters, digits, '.', '_', '-', '/'; no "..", not under
  // weights/) whose size and SHA-256 go into the manifest's `files` section; the runtime verifies
  // them before using it (Artifact::file_bytes). For kernel libraries and small model files.
  void add_file(const std::string& relative_path, std::span<const std::byte> bytes);
  // Writes the index, the manifest and its seal, and moves the artifact into place. Nothing may be added
  // afterwards.
  void finish();

 private:
  void check_writable(const char* operation) const;
  void commit_staging();

  std::string dir_;
  FolderLock staging_lock_;             // on the staging directory, taken as staging_cleanup_ creates it
  CleanupOnInterrupt staging_cleanup_;  // makes the staging directory; removes it if the build is interrupted
  std::string staging_dir_;
  std::optional<ArtifactKey> key_;  // before shards_, which points into it
  std::shared_ptr<const ArtifactSigningKey> signing_key_;
  ArtifactManifest manifest_;
  WeightShardWriter shards_;
  bool finished_ = false;
  bool failed_ = false;  // an earlier error left the staging directory incomplete
};

}  // namespace websd::artifact
