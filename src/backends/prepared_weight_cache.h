// The prepared-weight cache: a folder of files (prepared_weight_file.h), one per checkpoint
// component content (component_digest.h) and preparation signature (websd version, packing library
// and instruction set), holding the component's weights as the CPU executors use them. A run of
// `websd generate --model` maps them instead of reading, upcasting, merging and packing the
// checkpoint's tensors again. Files are verified before use and removed (never trusted) when they
// fail; the folder's total size is kept under a bound by removing the least recently used files.
//
//   <dir>/<hash of digest and signature>.wpw   the prepared weights (last use = modification time)
//   <dir>/identities/<hash of file identity>   a component's content digest, by its files' identity
//
// Thread-safety: methods may run concurrently (the backend prefetches and writes in background
// threads); two processes may share the folder (files are replaced atomically, and a file removed
// while another process maps it stays readable there).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/prepared_weight_file.h"
#include "import/checkpoint_component.h"

namespace websd::backends {

struct PreparedWeightCacheOptions {
  std::string dir;                                 // created when first written
  std::uint64_t max_bytes = 0;                     // bound on the total size of the folder's files
  std::function<void(const std::string&)> notice;  // one line per event a user should hear of
};

// One file of the folder, as `websd cache list` shows it.
struct PreparedWeightListing {
  std::string path;
  std::string component;  // empty when the file cannot be read
  std::string source;
  std::string problem;  // why it cannot be read, else empty
  std::uint64_t bytes = 0;
  std::filesystem::file_time_type last_used;
};

class PreparedWeightCache {
 public:
  explicit PreparedWeightCache(PreparedWeightCacheOptions options);

  // user_cache_dir()/prepared-weights ($XDG_CACHE_HOME/websd/... or ~/.cache/websd/...).
  static std::string default_dir();
  // The bound from WEBSD_WEIGHT_CACHE_MAX ("16G", "500M", "0" to keep nothing, plain bytes), else
  // kDefaultMaxBytes. Throws websd::Error naming the variable and value when malformed.
  static std::uint64_t default_max_bytes();
  // Room for three SD 1.5-sized models in float32 (about 4.3 GB each).
  static constexpr std::uint64_t kDefaultMaxBytes = 16ull << 30;

  const std::string& dir() const { return options_.dir; }
  std::uint64_t max_bytes() const { return options_.max_bytes; }

  // The component's content digest: the one kept for its files' identity when that is unchanged,
  // else computed (reading every tensor) and kept.
  std::string digest_of(const CheckpointComponent& component);
  // The file for (digest, signature) after verify(release_pages) passes, marked as used now; null
  // when the cache has none. A file that fails a check is removed, with a notice, and null returned.
  std::shared_ptr<const PreparedWeightFile> open(const std::string& digest, const std::string& signature,
                                                 bool release_pages);
  // Writes the file for header.digest and header.signature, then removes the least recently used
  // other files until the folder fits its bound. Skips (with a notice) a file larger than the
  // bound or than the free disk space less 1 GiB. A write that fails is noticed, not thrown (it runs
  // on a writer thread, and the cache only ever saves time).
  void store(const PreparedWeightsHeader& header, const std::vector<PreparedWeightData>& weights);

  // Every file of the folder, least recently used first.
  std::vector<PreparedWeightListing> list() const;
  // Removes every file of the folder (a running writer's temporary file excepted); returns the bytes freed.
  std::uint64_t clear();

  // Passes one line to the options' notice (serialised: background threads call it too).
  void notice(const std::string& line);

 private:
  std::string file_path(const std::string& digest, const std::string& signature) const;
  // store's work; may throw.
  void store_file(const PreparedWeightsHeader& header, const std::vector<PreparedWeightData>& weights);
  // Removes the least recently used files but `keep` until the total fits max_bytes.
  void evict(const std::string& keep);
  // Removes temporary files of writers that are no longer running.
  void sweep_abandoned_writes();

  PreparedWeightCacheOptions options_;
  std::mutex notice_mutex_;
};

}  // namespace websd::backends
