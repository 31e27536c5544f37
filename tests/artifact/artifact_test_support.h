// Builders and editors of small artifacts for the artifact tests: a fixed set of f32/f16/bf16
// tensors with known bytes, key files, and ways to alter a written artifact on disk the way a
// broken copy or a hostile edit would.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "artifact/artifact_writer.h"

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

// Writes sample_tensors() and a functions section to `dir` (created) with the small shard limit.
void write_sample_artifact(const std::string& dir, std::optional<artifact::ArtifactKey> key = std::nullopt,
                           const std::string& target = "cpu");

// Options that expect `target` and read the key from `key_file` when given.
artifact::ArtifactOpenOptions open_options(const std::string& target, const std::string& key_file = "");

// A key with bytes 0, 1, ..., 31 plus `salt`, and a key file holding it as hex.
artifact::ArtifactKey sample_key(std::uint8_t salt = 0);
std::string write_hex_key_file(const std::string& dir, const artifact::ArtifactKey& key);

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

// Applies `edit` to manifest.json's JSON and writes it back.
void edit_manifest(const std::string& dir, const std::function<void(nlohmann::json&)>& edit);
// Applies `edit` to weights/index.json, then records the new index checksum in the manifest, as
// someone crafting an artifact would: the index's own checks must catch the edit.
void edit_index_consistently(const std::string& dir, const std::function<void(nlohmann::json&)>& edit);
// Flips one bit of the file's byte at `offset`.
void flip_byte(const std::string& path, std::size_t offset);

// The message of the websd::Error that `action` throws; fails the test if it throws nothing.
std::string error_of(const std::function<void()>& action);

}  // namespace websd::test
