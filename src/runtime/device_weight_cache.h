// Weights imported into a device once and shared by every executor that binds the same artifact
// tensor: an artifact's unet, unet_b1 and unet_cfg (and the same functions built for other image
// sizes) read one set of UNet weights, so with the cache they hold one copy on the device, not
// three. The cache keeps weak references: a weight's buffer is freed when the last executor
// holding it is dropped (a network released by Residency::kOneNetwork), and the next bind imports
// it again.
//
//   DeviceWeightCache shared;
//   unet_cfg.bind_weights(source, &shared);  // reads and imports
//   unet_b1.bind_weights(source, &shared);   // reads nothing: the same buffers
//
// Keyed by the weight's artifact name (which includes its packing), layout and type. One cache per
// device. Not thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "runtime/device.h"
#include "runtime/launch_list.h"

namespace websd::runtime {

class DeviceWeightCache {
 public:
  // The buffer an executor still alive imported for `weight`, or null.
  BufferPtr find(const LaunchWeight& weight);
  // Records `buffer` as the import of `weight` (dropping the records of freed buffers).
  void remember(const LaunchWeight& weight, const BufferPtr& buffer);
  // How many imported weights are alive.
  std::size_t live_count() const;

 private:
  std::map<std::string, std::weak_ptr<DeviceBuffer>> buffers_;
};

}  // namespace websd::runtime
