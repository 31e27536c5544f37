// The runtime's view of an artifact's weight shards: each shard is read the first time one of its
// tensors is asked for, its SHA-256 is checked against the index before anything else, and it is
// then kept: memory-mapped when stored in plain form, decrypted into memory when encrypted.
// Returned spans stay valid as long as the store. Thread-safe: concurrent first reads of a shard
// are serialised; later reads take only a short lock.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "artifact/artifact_key.h"
#include "artifact/weight_index.h"
#include "io/mapped_file.h"

namespace websd::artifact {

class WeightShardStore {
 public:
  // `weights_dir` holds the shard files. `key` is required to read encrypted shards; without it a
  // read fails with "encrypted but no key given".
  WeightShardStore(std::string weights_dir, std::vector<WeightShard> shards, std::optional<ArtifactKey> key);

  // The stored bytes of shard `index` (plain, verified), loading it on first use. Throws
  // websd::Error("artifact", ...) on a checksum mismatch, a file that changed size since open, a
  // missing key or a failed decryption.
  std::span<const std::byte> shard_bytes(std::size_t index) const;
  // Drops the resident pages of every memory-mapped (plain) shard: they stop counting towards this
  // process's memory and are read again from the file when touched; spans stay valid. Decrypted
  // shards live in memory and are kept.
  void release_resident_pages() const;

 private:
  struct LoadedShard {
    bool loaded = false;
    std::optional<MappedFile> mapping;  // plain shards
    std::vector<std::byte> plain;       // decrypted shards
  };
  void load(std::size_t index, LoadedShard& shard) const;

  std::string weights_dir_;
  std::vector<WeightShard> shards_;
  std::optional<ArtifactKey> key_;
  mutable std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  mutable std::vector<LoadedShard> loaded_;
};

}  // namespace websd::artifact
