#include "artifact/weight_index.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "artifact/artifact_hex.h"
#include "artifact/artifact_json.h"
#include "core/error.h"

namespace websd::artifact {
namespace {

constexpr const char* kTamperedFix = "the weight index was edited or is corrupt: rebuild the artifact";
// Far above any real tensor's rank; keeps a hostile shape from allocating unbounded memory.
constexpr std::size_t kMaxRank = 64;

std::string item_name(std::string_view list, std::size_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

// Reads a fixed-size hex field (digest, IV, tag) into `out`.
template <std::size_t N>
void read_hex_field(const JsonFieldReader& reader, const nlohmann::json& object, std::string_view key,
                    const std::string& where, std::array<std::uint8_t, N>& out) {
  const std::string text = reader.string(object, key, where);
  const auto bytes = hex_decode(text);
  if (!bytes || bytes->size() != N) {
    reader.fail("field '" + json_field_name(where, key) + "' is " + json_kind(object.at(key)) + ", expected " +
                std::to_string(2 * N) + " hex digits");
  }
  std::copy(bytes->begin(), bytes->end(), out.begin());
}

bool is_plain_file_name(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name.front() != '.' &&
         name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

WeightShard read_shard(const JsonFieldReader& reader, const nlohmann::json& item, const std::string& where) {
  WeightShard shard;
  shard.file = reader.string(item, "file", where);
  if (!is_plain_file_name(shard.file)) {
    reader.fail("field '" + where + ".file' is " + json_kind(item.at("file")) +
                ", expected a plain file name inside weights/");
  }
  shard.bytes = reader.unsigned_integer(item, "bytes", where);
  read_hex_field(reader, item, "sha256", where, shard.sha256);
  const bool has_iv = item.contains("iv");
  if (has_iv != item.contains("tag")) reader.fail(where + " has only one of 'iv' and 'tag'");
  if (has_iv) {
    read_hex_field(reader, item, "iv", where, shard.iv.emplace());
    read_hex_field(reader, item, "tag", where, shard.tag.emplace());
  }
  return shard;
}

// numel x element size, or nullopt on overflow.
std::optional<std::uint64_t> shape_bytes(const Shape& shape, DType dtype) {
  std::uint64_t bytes = dtype_size(dtype);
  for (const std::int64_t dim : shape) {
    const auto extent = static_cast<std::uint64_t>(dim);
    if (extent != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / extent) return std::nullopt;
    bytes *= extent;
  }
  return bytes;
}

WeightEntry read_tensor(const JsonFieldReader& reader, const nlohmann::json& item, const std::string& where,
                        const std::vector<WeightShard>& shards) {
  WeightEntry entry;
  entry.name = reader.string(item, "name", where);
  const std::string dtype = reader.string(item, "dtype", where);
  const auto parsed_dtype = weight_dtype_from_name(dtype);
  if (!parsed_dtype)
    reader.fail("field '" + where + ".dtype' is " + json_kind(item.at("dtype")) + ", expected f32, f16 or bf16");
  entry.dtype = *parsed_dtype;
  const nlohmann::json& shape = reader.array(item, "shape", where);
  if (shape.size() > kMaxRank) reader.fail(where + ".shape has rank " + std::to_string(shape.size()) + ", at most 64");
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (!shape[d].is_number_unsigned() || shape[d].get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max()) {
      reader.fail(where + ".shape[" + std::to_string(d) + "] is " + json_kind(shape[d]) +
                  ", expected a non-negative integer");
    }
    entry.shape.push_back(shape[d].get<std::int64_t>());
  }
  entry.shard = reader.unsigned_integer(item, "shard", where);
  entry.offset = reader.unsigned_integer(item, "offset", where);
  entry.bytes = reader.unsigned_integer(item, "bytes", where);

  const std::string label = where + " (" + quote_for_message(entry.name) + ")";
  const auto expected_bytes = shape_bytes(entry.shape, entry.dtype);
  if (!expected_bytes || *expected_bytes != entry.bytes) {
    reader.fail(label + ": " + std::to_string(entry.bytes) + " bytes disagree with shape " +
                shape_to_string(entry.shape) + " x " + std::string(dtype));
  }
  if (entry.offset % kShardAlignment != 0) {
    reader.fail(label + ": offset " + std::to_string(entry.offset) + " is not a multiple of " +
                std::to_string(kShardAlignment));
  }
  if (entry.shard >= shards.size()) {
    reader.fail(label + ": index entry out of its shard's bounds: shard " + std::to_string(entry.shard) +
                " does not exist (the index lists " + std::to_string(shards.size()) + ")");
  }
  const WeightShard& shard = shards[entry.shard];
  if (entry.offset > shard.bytes || entry.bytes > shard.bytes - entry.offset) {
    reader.fail(label + ": index entry out of its shard's bounds: bytes [" + std::to_string(entry.offset) + ", " +
                std::to_string(entry.offset) + " + " + std::to_string(entry.bytes) + ") but " +
                quote_for_message(shard.file) + " holds " + std::to_string(shard.bytes) + " bytes");
  }
  return entry;
}

}  // namespace

std::string_view weight_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    default:
      throw Error("artifact", "weights are stored as f32, f16 or bf16, not " + std::string(dtype_name(dtype)) +
                                  " (cast the tensor before adding it)");
  }
}

std::optional<DType> weight_dtype_from_name(std::string_view name) {
  if (name == "f32") return DType::kF32;
  if (name == "f16") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  return std::nullopt;
}

WeightIndex parse_weight_index(std::string_view text, const std::string& origin) {
  const JsonFieldReader reader(origin, kTamperedFix);
  const nlohmann::json root = reader.parse(text);
  WeightIndex index;
  const nlohmann::json& shards = reader.array(root, "shards", "");
  std::set<std::string, std::less<>> files;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    index.shards.push_back(read_shard(reader, shards[i], item_name("shards", i)));
    if (!files.insert(index.shards.back().file).second) {
      reader.fail(item_name("shards", i) + " names the file " + quote_for_message(index.shards.back().file) +
                  " a second time");
    }
    if (index.shards.back().iv.has_value() != index.shards.front().iv.has_value()) {
      reader.fail(item_name("shards", i) + (index.shards.back().iv ? " has" : " lacks") +
                  " the 'iv' and 'tag' of encryption, unlike shards[0]");
    }
  }
  const nlohmann::json& tensors = reader.array(root, "tensors", "");
  std::set<std::string, std::less<>> names;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    index.tensors.push_back(read_tensor(reader, tensors[i], item_name("tensors", i), index.shards));
    if (!names.insert(index.tensors.back().name).second) {
      reader.fail(item_name("tensors", i) + " repeats the tensor name " + quote_for_message(index.tensors.back().name));
    }
  }
  return index;
}

std::string weight_index_to_text(const WeightIndex& index) {
  nlohmann::ordered_json root;
  root["shards"] = nlohmann::ordered_json::array();
  for (const WeightShard& shard : index.shards) {
    nlohmann::ordered_json item = {{"file", shard.file}, {"bytes", shard.bytes}, {"sha256", hex_encode(shard.sha256)}};
    if (shard.iv) item["iv"] = hex_encode(*shard.iv);
    if (shard.tag) item["tag"] = hex_encode(*shard.tag);
    root["shards"].push_back(std::move(item));
  }
  root["tensors"] = nlohmann::ordered_json::array();
  for (const WeightEntry& entry : index.tensors) {
    root["tensors"].push_back({{"name", entry.name},
                               {"shape", entry.shape},
                               {"dtype", std::string(weight_dtype_name(entry.dtype))},
                               {"shard", entry.shard},
                               {"offset", entry.offset},
                               {"bytes", entry.bytes}});
  }
  return root.dump(1) + "\n";
}

}  // namespace websd::artifact
