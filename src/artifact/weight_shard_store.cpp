#include "artifact/weight_shard_store.h"

#include "artifact/artifact_hex.h"
#include "artifact/sha256.h"
#include "core/error.h"
#include "core/stopwatch.h"

namespace websd::artifact {

WeightShardStore::WeightShardStore(const ArtifactSource& source, std::vector<WeightShard> shards,
                                   std::unique_ptr<ArtifactDecryptor> decryptor)
    : source_(&source), shards_(std::move(shards)), decryptor_(std::move(decryptor)), loaded_(shards_.size()) {}

std::span<const std::byte> WeightShardStore::shard_bytes(std::size_t index) const {
  const std::lock_guard lock(*mutex_);
  LoadedShard& shard = loaded_.at(index);
  if (!shard.loaded) load(index, shard);
  if (shard.mapping) return shard.mapping->bytes();
  return shard.bytes;
}

void WeightShardStore::load(std::size_t index, LoadedShard& shard) const {
  const WeightShard& expected = shards_[index];
  const std::string relative = std::string(kWeightsDir) + "/" + expected.file;
  const std::string path = source_->where(relative);
  if (expected.iv && !decryptor_) {
    throw Error("artifact", path + ": the artifact is encrypted (aes-256-gcm) but no key was given (pass --key-file)");
  }
  // A source that maps keeps the stored bytes in the page cache, not in this process's memory.
  const Stopwatch read_time;
  std::optional<MappedFile> mapping = source_->map(relative);
  std::vector<std::byte> fetched;
  if (!mapping) fetched = source_->read(relative);
  times_.read_s += read_time.seconds();
  const std::span<const std::byte> stored = mapping ? mapping->bytes() : std::span<const std::byte>(fetched);
  if (stored.size() != expected.bytes) {
    throw Error("artifact", path + ": shard size changed since the artifact was opened: expected " +
                                std::to_string(expected.bytes) + " bytes, found " + std::to_string(stored.size()) +
                                " (copy the artifact again)");
  }
  const Stopwatch verify_time;
  const std::optional<Sha256Digest> from_source = mapping ? std::nullopt : source_->read_digest(relative);
  const Sha256Digest digest = from_source ? *from_source : sha256(stored);
  times_.verify_s += verify_time.seconds();
  if (from_source) ++times_.hashed_by_source;
  times_.bytes += stored.size();
  ++times_.shards;
  if (digest != expected.sha256) {
    throw Error("artifact", path + ": checksum mismatch: SHA-256 " + hex_encode(digest) + ", the index says " +
                                hex_encode(expected.sha256) +
                                " (the shard is corrupt: copy the artifact again or rebuild it)");
  }
  if (expected.iv) {
    std::vector<std::byte> plain(stored.size());
    const Stopwatch decrypt_time;
    const bool decrypted = decryptor_->decrypt(expected, stored, plain);
    times_.decrypt_s += decrypt_time.seconds();
    if (!decrypted) {
      throw Error("artifact", path +
                                  ": decryption failed: the AES-GCM tag does not match although the key check and "
                                  "checksum did (the index's iv or tag was altered: rebuild the artifact)");
    }
    shard.bytes = std::move(plain);
  } else if (mapping) {
    shard.mapping = std::move(mapping);
  } else {
    shard.bytes = std::move(fetched);
  }
  shard.loaded = true;
}

void WeightShardStore::release_shard(std::size_t index) const {
  const std::lock_guard lock(*mutex_);
  loaded_.at(index) = LoadedShard{};
}

void WeightShardStore::release_resident_pages() const {
  const std::lock_guard lock(*mutex_);
  for (const LoadedShard& shard : loaded_) {
    if (shard.mapping) shard.mapping->release_pages(0, shard.mapping->size());
  }
}

ShardLoadTimes WeightShardStore::load_times() const {
  const std::lock_guard lock(*mutex_);
  return times_;
}

}  // namespace websd::artifact
