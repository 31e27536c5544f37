#include "pipeline/schedulers/alpha_scheduler.h"

#include <cmath>

#include "pipeline/schedulers/sample_math.h"

namespace websd::schedulers {

HostTensor AlphaScheduler::add_noise(const HostTensor& original, const HostTensor& noise, double timestep) const {
  if (original.shape != noise.shape) {
    fail("add_noise: sample " + shape_to_string(original.shape) + " and noise " + shape_to_string(noise.shape) +
         " differ in shape");
  }
  const float alpha = alpha_cumprod_at(train_index(timestep));
  const float signal_scale = std::sqrt(alpha);
  const float noise_scale = std::sqrt(1.0f - alpha);
  return map_samples(original, noise, [&](float x, float n) { return signal_scale * x + noise_scale * n; });
}

}  // namespace websd::schedulers
