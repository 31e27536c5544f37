// The prepared-weight cache (prepared_weight_cache.h) as one network of a CheckpointBackend uses
// it: the component's cache file found and verified once (ahead of the network's first call, by
// the backend's prefetch thread, or on the first lookup), weights handed out from its mapping
// without a copy, and the weights the network had to prepare from the checkpoint written back in a
// background thread while the network runs.
//
//   CachedNetworkWeights unet(cache, checkpoint.component("unet"), signature);
//   unet.resolve();                                       // prefetch (optional)
//   if (auto hit = unet.find(key, DType::kF32)) return *hit;  // else prepare, then:
//   unet.add_prepared(key, prepared);
//   unet.write_behind();                                  // once the executor has bound its weights
//
// Ownership: borrows the component (which must outlive it); shares the cache. Thread-safety:
// every method may run concurrently with resolve() from another thread; the destructor and
// release() wait for a write in progress.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backends/prepared_weight_cache.h"
#include "import/checkpoint_component.h"
#include "runtime/device.h"

namespace websd::backends {

class CachedNetworkWeights {
 public:
  CachedNetworkWeights(std::shared_ptr<PreparedWeightCache> cache, const CheckpointComponent& component,
                       std::string signature);
  ~CachedNetworkWeights();
  CachedNetworkWeights(const CachedNetworkWeights&) = delete;
  CachedNetworkWeights& operator=(const CachedNetworkWeights&) = delete;

  // Finds the component's digest and its verified cache file, once (later calls return at once;
  // a concurrent call waits for the first). Verifying reads every entry, and a file holds entries a
  // run does not use (the other --dtype's, other input shapes' packings): each entry's pages leave
  // the process's resident memory once checked, and the ones the network uses come back from the
  // page cache when its kernels read them. A failure (an unreadable checkpoint file) is noticed and
  // turns the cache off for this network.
  void resolve();
  // Prepared weight `key` from the cache file, as the CPU device adopts it (values of `stored`, the
  // type the key's weights are prepared in; the mapping as owner); nullopt when the file does not
  // hold it.
  std::optional<runtime::WeightBytes> find(const std::string& key, DType stored);
  // Keeps a weight the network prepared from the checkpoint (alive, through bytes.owner) for the
  // next write_behind().
  void add_prepared(const std::string& key, const runtime::WeightBytes& bytes);
  // When weights were prepared since the last write: writes a new cache file of them and of every
  // weight the current file holds, in a background thread.
  void write_behind();
  // Waits for a write in progress and drops the mapping and the kept weights (the backend calls it
  // before it releases the network's weights).
  void release();
  // Whether the cache file was found and used (for tests and messages).
  bool hit() const;

 private:
  void join_writer();

  std::shared_ptr<PreparedWeightCache> cache_;
  const CheckpointComponent& component_;
  std::string signature_;
  mutable std::mutex mutex_;
  bool resolved_ = false;
  bool disabled_ = false;
  std::string digest_;
  std::shared_ptr<const PreparedWeightFile> file_;
  std::map<std::string, runtime::WeightBytes> prepared_;  // since the last write
  std::thread writer_;
};

}  // namespace websd::backends
