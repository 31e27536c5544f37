// Element-wise arithmetic on latents for the schedulers, and the limits diffusers may put on a
// predicted x0 (clip_sample, Imagen's dynamic thresholding). Element-wise lambdas take and return
// float so each operation rounds as torch's float32 kernels do. Pure functions; thread-safe.
#pragma once

#include <cstddef>

#include "core/host_tensor.h"
#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/scheduler_config.h"

namespace websd::schedulers {

// out[i] = op(a[i]) (and b[i], c[i]); the shapes must agree (the callers check them).
template <typename Op>
HostTensor map_samples(const HostTensor& a, Op op) {
  HostTensor out(a.shape, std::vector<float>(a.data.size()));
  for (std::size_t i = 0; i < a.data.size(); ++i) out.data[i] = op(a.data[i]);
  return out;
}

template <typename Op>
HostTensor map_samples(const HostTensor& a, const HostTensor& b, Op op) {
  HostTensor out(a.shape, std::vector<float>(a.data.size()));
  for (std::size_t i = 0; i < a.data.size(); ++i) out.data[i] = op(a.data[i], b.data[i]);
  return out;
}

template <typename Op>
HostTensor map_samples(const HostTensor& a, const HostTensor& b, const HostTensor& c, Op op) {
  HostTensor out(a.shape, std::vector<float>(a.data.size()));
  for (std::size_t i = 0; i < a.data.size(); ++i) out.data[i] = op(a.data[i], b.data[i], c.data[i]);
  return out;
}

// The clean sample x0 that a model output predicts, for schedulers indexed by sigma (euler, heun,
// lms, euler_a: x = x0 + sigma * noise) ...
HostTensor x0_from_sigma_output(PredictionType prediction, const HostTensor& sample, const HostTensor& output,
                                float sigma);
// ... and for schedulers indexed by alpha_cumprod (ddpm, lcm: x = root_alpha * x0 + root_beta * noise).
HostTensor x0_from_alpha_output(PredictionType prediction, const HostTensor& sample, const HostTensor& output,
                                float root_alpha, float root_beta);

// What a class does to its predicted x0 before using it, read from its config keys.
struct X0Limit {
  bool thresholding = false;
  float threshold_ratio = 0.995f;  // dynamic_thresholding_ratio
  float threshold_max = 1.0f;      // sample_max_value (infinite when null)
  bool clip = false;
  float clip_range = 1.0f;  // clip_sample_range

  // Thresholding (per batch item: s = clamp(quantile(|x0|, ratio), 1, max); x0 = clamp(x0, -s, s) / s)
  // takes precedence over clipping to [-clip_range, clip_range], as in diffusers.
  HostTensor apply(HostTensor x0) const;
};

// `thresholding_keys`: the class has thresholding, dynamic_thresholding_ratio, sample_max_value;
// `clip_keys`: it has clip_sample, clip_sample_range.
X0Limit read_x0_limit(const SchedulerConfig& config, bool thresholding_keys, bool clip_keys);

}  // namespace websd::schedulers
