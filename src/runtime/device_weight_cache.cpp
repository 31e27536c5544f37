#include "runtime/device_weight_cache.h"

#include <algorithm>

namespace websd::runtime {
namespace {

std::string key_of(const LaunchWeight& weight) {
  return weight.name + '\n' + weight.layout + '\n' + weight.type.to_string();
}

}  // namespace

BufferPtr DeviceWeightCache::find(const LaunchWeight& weight) {
  const auto found = buffers_.find(key_of(weight));
  if (found == buffers_.end()) return nullptr;
  BufferPtr buffer = found->second.lock();
  if (buffer == nullptr) buffers_.erase(found);
  return buffer;
}

void DeviceWeightCache::remember(const LaunchWeight& weight, const BufferPtr& buffer) {
  std::erase_if(buffers_, [](const auto& held) { return held.second.expired(); });
  buffers_[key_of(weight)] = buffer;
}

std::size_t DeviceWeightCache::live_count() const {
  return static_cast<std::size_t>(
      std::count_if(buffers_.begin(), buffers_.end(), [](const auto& held) { return !held.second.expired(); }));
}

}  // namespace websd::runtime
