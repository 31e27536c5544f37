// What loading an artifact's weight shards took (artifact.h, weight_shard_store.h).
#pragma once

#include <cstdint>

namespace websd::artifact {

// Summed over the loads so far: reading (or mapping) the files, then their SHA-256 checks (a
// mapped shard's pages are read by the check; a digest the source computed while reading is
// counted in read_s) and decryption.
struct ShardLoadTimes {
  double read_s = 0;
  double verify_s = 0;
  double decrypt_s = 0;
  std::uint64_t bytes = 0;
  std::int64_t shards = 0;            // loads (a released shard loaded again counts again)
  std::int64_t hashed_by_source = 0;  // of those, checked by the digest the source gave (read_digest)
};

}  // namespace websd::artifact
