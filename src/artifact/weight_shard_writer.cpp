#include "artifact/weight_shard_writer.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

#include "artifact/artifact_json.h"
#include "core/error.h"

namespace websd::artifact {
namespace {

// Encryption works through a buffer of this size, so memory stays bounded for any tensor.
constexpr std::size_t kCipherChunkBytes = std::size_t{1} << 20;

std::string shard_file_name(std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof(name), "shard-%05zu.bin", index);
  return name;
}

std::uint64_t align_up(std::uint64_t value) {
  return (value + kShardAlignment - 1) / kShardAlignment * kShardAlignment;
}

[[noreturn]] void fail_tensor(const std::string& name, const std::string& what) {
  throw Error("artifact", "weight " + quote_for_message(name) + ": " + what);
}

}  // namespace

WeightShardWriter::WeightShardWriter(std::string folder, std::uint64_t shard_limit_bytes, const AesKey* key)
    : folder_(std::move(folder)), shard_limit_bytes_(shard_limit_bytes), key_(key) {}

void WeightShardWriter::add(const std::string& name, const Shape& shape, DType dtype,
                            std::span<const std::byte> bytes) {
  if (name.empty()) fail_tensor(name, "the name is empty (give every weight a unique name)");
  if (names_.count(name) != 0) fail_tensor(name, "added twice (weight names are unique)");
  const std::string_view dtype_text = weight_dtype_name(dtype);
  std::uint64_t expected = dtype_size(dtype);
  for (const std::int64_t dim : shape) {
    if (dim < 0) fail_tensor(name, "shape " + shape_to_string(shape) + " has a negative dimension");
    const auto extent = static_cast<std::uint64_t>(dim);
    if (extent != 0 && expected > std::numeric_limits<std::uint64_t>::max() / extent) {
      fail_tensor(name, "shape " + shape_to_string(shape) + " is too large");
    }
    expected *= extent;
  }
  if (bytes.size() != expected) {
    fail_tensor(name, std::to_string(bytes.size()) + " bytes given, shape " + shape_to_string(shape) + " x " +
                          std::string(dtype_text) + " needs " + std::to_string(expected));
  }

  const std::uint64_t size = bytes.size();
  if (file_.is_open() && file_bytes_ > 0 && align_up(file_bytes_) + size > shard_limit_bytes_) close_shard();
  if (!file_.is_open()) open_shard();
  write_zeros(align_up(file_bytes_) - file_bytes_);
  index_.tensors.push_back({name, shape, dtype, index_.shards.size(), file_bytes_, size});
  names_.insert(name);
  write_stored(bytes);
  // A tensor over the limit keeps its shard to itself.
  if (size > shard_limit_bytes_) close_shard();
}

const WeightIndex& WeightShardWriter::finish() {
  if (file_.is_open()) close_shard();
  return index_;
}

void WeightShardWriter::open_shard() {
  file_path_ = folder_ + "/" + shard_file_name(index_.shards.size());
  file_.open(file_path_, std::ios::binary | std::ios::trunc);
  if (!file_) throw Error("artifact", file_path_ + ": cannot create the shard file (check permissions and space)");
  file_bytes_ = 0;
  hash_.emplace();
  if (key_ != nullptr) {
    iv_.emplace();
    random_bytes(*iv_);  // a fresh IV per shard: GCM must never reuse one under the same key
    cipher_.emplace(*key_, *iv_);
  }
}

void WeightShardWriter::close_shard() {
  WeightShard shard;
  shard.file = file_path_.substr(folder_.size() + 1);
  shard.bytes = file_bytes_;
  shard.sha256 = hash_->finish();
  if (cipher_) {
    shard.iv = *iv_;
    shard.tag = cipher_->finish();
  }
  file_.close();
  if (!file_) throw Error("artifact", file_path_ + ": writing the shard failed (disk full?)");
  index_.shards.push_back(std::move(shard));
  hash_.reset();
  cipher_.reset();
  iv_.reset();
}

void WeightShardWriter::write_stored(std::span<const std::byte> bytes) {
  std::vector<std::byte> cipher_text;
  while (!bytes.empty()) {
    std::span<const std::byte> stored = bytes.first(std::min(bytes.size(), kCipherChunkBytes));
    bytes = bytes.subspan(stored.size());
    if (cipher_) {
      cipher_text.resize(stored.size());
      cipher_->update(stored, cipher_text);
      stored = cipher_text;
    }
    hash_->update(stored);
    file_.write(reinterpret_cast<const char*>(stored.data()), static_cast<std::streamsize>(stored.size()));
    if (!file_) throw Error("artifact", file_path_ + ": writing the shard failed (disk full?)");
    file_bytes_ += stored.size();
  }
}

void WeightShardWriter::write_zeros(std::uint64_t count) {
  const std::byte zeros[kShardAlignment] = {};
  write_stored(std::span<const std::byte>(zeros, static_cast<std::size_t>(count)));
}

}  // namespace websd::artifact
