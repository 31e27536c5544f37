// One file of the prepared-weight cache (prepared_weight_cache.h): the weights of one checkpoint
// component as a network's executors use them (upcast to float32, merged, packed for this CPU's
// kernels), so that a later run maps them instead of preparing them again.
//
// Layout (little-endian):
//   bytes 0..7    "WEBSDPW1"
//   bytes 8..15   header length H (u64)
//   bytes 16..23  XXH3-64 of the header
//   bytes 24..    the header: JSON {"component", "source", "digest", "signature",
//                 "entries": [{"key", "offset", "bytes", "xxh3"}]}
//   then each entry's bytes at its offset, page-aligned (the file is mapped and its pages adopted
//   in place by the CPU device).
// Every offset and size is checked against the file at open; an entry's bytes are checked against
// its XXH3-64 by verify() before anything reads them. XXH3 (libxxhash) rather than SHA-256: this
// guards against a damaged or truncated file, not an attacker (the cache is the user's own folder),
// and it checks 3.4 GB of SD 1.5 UNet weights in a fraction of a second.
//
// Ownership: a PreparedWeightFile owns its mapping; spans it hands out live as long as mapping().
// Thread-safety: immutable after open; concurrent reads are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapped_file.h"

namespace websd::backends {

// What a cache file holds and for what.
struct PreparedWeightsHeader {
  std::string component;  // "unet"
  std::string source;     // the checkpoint it was prepared from, for listings only
  std::string digest;     // the component's content digest (component_digest.h), hex
  std::string signature;  // how the weights were prepared (websd version, packing library and ISA)
};

// One prepared weight: its key (the recipe and layout that made it) and its bytes.
struct PreparedWeightData {
  std::string key;
  std::span<const std::byte> bytes;
};

// Writes a cache file of `weights` to `path` atomically (a temporary file renamed over it).
// Throws websd::Error("cache") naming the path when it cannot be written (disk full).
void write_prepared_weight_file(const std::string& path, const PreparedWeightsHeader& header,
                                const std::vector<PreparedWeightData>& weights);

// The bytes write_prepared_weight_file writes for weights of these sizes (to check disk space first).
std::uint64_t prepared_weight_file_bytes(const PreparedWeightsHeader& header,
                                         const std::vector<PreparedWeightData>& weights);

class PreparedWeightFile {
 public:
  // Maps `path` and checks its magic, header checksum, header fields and every entry's range.
  // Throws websd::Error("cache") naming the path and what is wrong.
  static std::shared_ptr<const PreparedWeightFile> open(const std::string& path);

  const std::string& path() const { return mapping_.path(); }
  const PreparedWeightsHeader& header() const { return header_; }
  std::size_t entry_count() const { return entries_.size(); }
  std::uint64_t size() const { return mapping_.size(); }

  // Checks every entry's bytes against its checksum, in file order; with `release_pages`, drops
  // each entry's pages from this process's resident memory once checked (they stay in the page
  // cache). Returns the key of the first entry that fails, or nullopt when all pass.
  std::optional<std::string> verify(bool release_pages) const;
  // The bytes of entry `key`, or nullopt when the file has none.
  std::optional<std::span<const std::byte>> find(std::string_view key) const;
  // Every entry, in file order.
  std::vector<PreparedWeightData> entries() const;

 private:
  struct Entry {
    std::string key;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    std::uint64_t xxh3 = 0;
  };

  explicit PreparedWeightFile(MappedFile mapping) : mapping_(std::move(mapping)) {}

  MappedFile mapping_;
  PreparedWeightsHeader header_;
  std::vector<Entry> entries_;  // sorted by key
};

}  // namespace websd::backends
