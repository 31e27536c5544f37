#include "artifact/weight_shard_store.h"

#include "artifact/artifact_hex.h"
#include "core/error.h"

namespace websd::artifact {

WeightShardStore::WeightShardStore(std::string weights_dir, std::vector<WeightShard> shards,
                                   std::optional<ArtifactKey> key)
    : weights_dir_(std::move(weights_dir)), shards_(std::move(shards)), key_(std::move(key)), loaded_(shards_.size()) {}

std::span<const std::byte> WeightShardStore::shard_bytes(std::size_t index) const {
  const std::lock_guard lock(*mutex_);
  LoadedShard& shard = loaded_.at(index);
  if (!shard.loaded) load(index, shard);
  if (shard.mapping) return shard.mapping->bytes();
  return shard.plain;
}

void WeightShardStore::load(std::size_t index, LoadedShard& shard) const {
  const WeightShard& expected = shards_[index];
  const std::string path = weights_dir_ + "/" + expected.file;
  if (expected.iv && !key_) {
    throw Error("artifact", path + ": the artifact is encrypted (aes-256-gcm) but no key was given (pass --key-file)");
  }
  MappedFile file(path);
  if (file.size() != expected.bytes) {
    throw Error("artifact", path + ": shard size changed since the artifact was opened: expected " +
                                std::to_string(expected.bytes) + " bytes, found " + std::to_string(file.size()) +
                                " (copy the artifact again)");
  }
  const Sha256Digest digest = sha256(file.bytes());
  if (digest != expected.sha256) {
    throw Error("artifact", path + ": checksum mismatch: SHA-256 " + hex_encode(digest) + ", the index says " +
                                hex_encode(expected.sha256) +
                                " (the shard is corrupt: copy the artifact again or rebuild it)");
  }
  if (expected.iv) {
    std::vector<std::byte> plain(file.size());
    if (!aes_256_gcm_decrypt(key_->bytes, *expected.iv, *expected.tag, file.bytes(), plain)) {
      throw Error("artifact", path +
                                  ": decryption failed: the AES-GCM tag does not match although the key check and "
                                  "checksum did (the index's iv or tag was altered: rebuild the artifact)");
    }
    shard.plain = std::move(plain);
  } else {
    shard.mapping.emplace(std::move(file));
  }
  shard.loaded = true;
}

void WeightShardStore::release_resident_pages() const {
  const std::lock_guard<std::mutex> lock(*mutex_);
  for (const LoadedShard& shard : loaded_) {
    if (shard.mapping) shard.mapping->release_pages(0, shard.mapping->size());
  }
}

}  // namespace websd::artifact
