// Builders of small artifacts for the native artifact tests: a fixed set of f32/f16/bf16 tensors
// with known bytes and key files; with artifact_file_edits.h, ways to alter a written artifact.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "artifact/artifact_writer.h"
#include "artifact_file_edits.h"

namespace websd::test {

struct SampleTensor {
  std::string name;
  Shape shape;
  DType dtype;
  std::vector<std::byte> bytes;
};

// Five tensors (f32, f16, f32 of 400 bytes, bf16, f32) whose bytes depend on their position.
std::vector<SampleTensor> sample_tensors();
// The shard limit the tests use: the 400-byte tensor exceeds it, so the tensors need 3 shards.
inline constexpr std::uint64_t kSmallShardLimit = 256;

// Writer options with the small shard limit and nothing else.
artifact::ArtifactWriterOptions small_shard_options();

// Writes sample_tensors() and a functions section to `dir` (created) with the small shard limit,
// encrypted with `key` and signed with `signing_key` when given.
void write_sample_artifact(const std::string& dir, std::optional<artifact::ArtifactKey> key = std::nullopt,
                           const std::string& target = "cpu",
                           std::shared_ptr<const artifact::ArtifactSigningKey> signing_key = nullptr);

// Options that expect `target` and read the key from `key_file` when given.
artifact::ArtifactOpenOptions open_options(const std::string& target, const std::string& key_file = "");

// A key with bytes 0, 1, ..., 31 plus `salt`, and a key file holding it as hex.
artifact::ArtifactKey sample_key(std::uint8_t salt = 0);
std::string write_hex_key_file(const std::string& dir, const artifact::ArtifactKey& key);

}  // namespace websd::test
