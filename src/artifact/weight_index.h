// weights/index.json: where each weight tensor lives (shard, offset, bytes) and what each shard
// file must be (size, SHA-256 of its stored bytes, and for encrypted artifacts the AES-GCM IV and
// tag). Parsing takes bytes so a fuzzer can drive it, and checks every entry against its shard's
// bounds, so a reader never indexes past a shard. Value types and pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/artifact_crypto.h"
#include "core/dtype.h"
#include "core/host_tensor.h"

namespace websd::artifact {

inline constexpr std::string_view kWeightsDir = "weights";
inline constexpr std::string_view kWeightIndexPath = "weights/index.json";
// Tensor offsets inside a shard are multiples of this (cache lines, SIMD loads, GPU uploads).
inline constexpr std::uint64_t kShardAlignment = 64;
// Small enough for browser caches and HTTP range-free downloads; a tensor larger than the limit
// is stored alone in a shard of its own size.
inline constexpr std::uint64_t kDefaultShardLimitBytes = 32ull << 20;

struct WeightShard {
  std::string file;  // a plain file name inside weights/: "shard-00000.bin"
  std::uint64_t bytes = 0;
  Sha256Digest sha256{};       // of the bytes as stored (after encryption)
  std::optional<AesGcmIv> iv;  // present exactly when the artifact is encrypted
  std::optional<AesGcmTag> tag;
};

struct WeightEntry {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  std::size_t shard = 0;  // index into WeightIndex::shards
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

struct WeightIndex {
  std::vector<WeightShard> shards;
  std::vector<WeightEntry> tensors;  // in the order they were added
};

// "f32", "f16", "bf16": the weight dtypes an artifact stores. Throws websd::Error for other dtypes.
std::string_view weight_dtype_name(DType dtype);
std::optional<DType> weight_dtype_from_name(std::string_view name);

// Parses and checks the index's bytes; `origin` (its path) starts every message. Throws
// websd::Error("artifact", ...) for bad JSON, fields of the wrong type, sizes that disagree with
// shape x dtype, duplicate names or files, unaligned offsets and entries out of their shard's
// bounds, and shards of which only some carry encryption parameters.
WeightIndex parse_weight_index(std::string_view text, const std::string& origin);

std::string weight_index_to_text(const WeightIndex& index);

}  // namespace websd::artifact
