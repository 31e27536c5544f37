// The runtime's view of an artifact's weight shards: each shard is read through the artifact's
// source the first time one of its tensors is asked for, its SHA-256 (or the digest the source
// computed while reading it: ArtifactSource::read_digest) is checked against the index
// before anything else, and it is then kept until released: memory-mapped when the source maps and
// the shard is stored in plain form, otherwise in memory (decrypted when encrypted). Returned spans
// stay valid until the shard is released or the store destroyed. Thread-safe: loads are serialised;
// later reads take only a short lock.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "artifact/artifact_decryptor.h"
#include "artifact/artifact_source.h"
#include "artifact/shard_load_times.h"
#include "artifact/weight_index.h"

namespace websd::artifact {

class WeightShardStore {
 public:
  // `source` holds the shard files under weights/ and must outlive the store. `decryptor` is
  // required to read encrypted shards; without it a read fails with "encrypted but no key given".
  WeightShardStore(const ArtifactSource& source, std::vector<WeightShard> shards,
                   std::unique_ptr<ArtifactDecryptor> decryptor);

  // The bytes of shard `index` (plain, verified), loading it on first use. Throws
  // websd::Error("artifact", ...) on a checksum mismatch, a file that changed size since open, a
  // missing key or a failed decryption.
  std::span<const std::byte> shard_bytes(std::size_t index) const;
  // Drops shard `index`'s bytes; spans into it become invalid, and its next use reads and verifies
  // it again. For a caller that streams shards (verify, upload, release).
  void release_shard(std::size_t index) const;
  // Drops the resident pages of every memory-mapped shard: they stop counting towards this
  // process's memory and are read again from the file when touched; spans stay valid. Shards held
  // in memory are kept.
  void release_resident_pages() const;
  ShardLoadTimes load_times() const;

 private:
  struct LoadedShard {
    bool loaded = false;
    std::optional<MappedFile> mapping;  // plain shards of a source that maps
    std::vector<std::byte> bytes;       // the others, decrypted when encrypted
  };
  void load(std::size_t index, LoadedShard& shard) const;

  const ArtifactSource* source_;
  std::vector<WeightShard> shards_;
  std::unique_ptr<ArtifactDecryptor> decryptor_;
  mutable std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  mutable std::vector<LoadedShard> loaded_;
  mutable ShardLoadTimes times_;
};

}  // namespace websd::artifact
