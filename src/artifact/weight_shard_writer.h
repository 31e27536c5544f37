// Packs weight tensors into shard files under a folder: each tensor starts at a 64-byte aligned
// offset, a shard grows until the next tensor would pass the limit, and a tensor larger than the
// limit is written alone into a shard of its own. Bytes are streamed to disk (optionally AES-256-GCM
// encrypted) and hashed as stored, so memory stays bounded whatever the tensor sizes.
// Part of ArtifactWriter; single owner, not thread-safe.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "artifact/artifact_crypto.h"
#include "artifact/sha256.h"
#include "artifact/weight_index.h"

namespace websd::artifact {

class WeightShardWriter {
 public:
  // Shards are written as <folder>/shard-00000.bin, ...; `key` (may be null) encrypts them.
  WeightShardWriter(std::string folder, std::uint64_t shard_limit_bytes, const AesKey* key);

  // Checks the tensor and appends it. Throws websd::Error("artifact", ...) naming the tensor for a
  // duplicate name, an unsupported dtype, a negative dimension or a size that disagrees with shape.
  void add(const std::string& name, const Shape& shape, DType dtype, std::span<const std::byte> bytes);
  // Closes the open shard and returns the complete index.
  const WeightIndex& finish();

 private:
  void open_shard();
  void close_shard();
  void write_stored(std::span<const std::byte> bytes);
  void write_zeros(std::uint64_t count);

  std::string folder_;
  std::uint64_t shard_limit_bytes_;
  const AesKey* key_;
  WeightIndex index_;
  std::set<std::string, std::less<>> names_;
  // The shard being written, if any.
  std::ofstream file_;
  std::string file_path_;
  std::uint64_t file_bytes_ = 0;
  std::optional<Sha256Stream> hash_;
  std::optional<AesGcmEncryptStream> cipher_;
  std::optional<AesGcmIv> iv_;
};

}  // namespace websd::artifact
