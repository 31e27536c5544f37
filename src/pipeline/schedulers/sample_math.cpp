#include "pipeline/schedulers/sample_math.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace websd::schedulers {
namespace {

// torch.quantile(values, q) with linear interpolation, in float32.
float quantile(std::vector<float> values, float q) {
  std::sort(values.begin(), values.end());
  const float rank = q * static_cast<float>(values.size() - 1);
  const float below = std::floor(rank);
  const auto low = static_cast<std::size_t>(below);
  const std::size_t high = std::min(low + 1, values.size() - 1);
  const float weight = rank - below;
  const float a = values[low];
  const float b = values[high];
  // torch.lerp's two-sided formula.
  return weight < 0.5f ? a + weight * (b - a) : b - (b - a) * (1.0f - weight);
}

}  // namespace

HostTensor X0Limit::apply(HostTensor x0) const {
  if (thresholding) {
    const std::size_t batch = x0.shape.empty() ? 1 : static_cast<std::size_t>(std::max<std::int64_t>(x0.shape[0], 1));
    const std::size_t per_item = x0.data.size() / batch;
    for (std::size_t b = 0; b < batch && per_item > 0; ++b) {
      const auto first = x0.data.begin() + static_cast<std::ptrdiff_t>(b * per_item);
      std::vector<float> magnitudes(first, first + static_cast<std::ptrdiff_t>(per_item));
      for (auto& value : magnitudes) value = std::fabs(value);
      const float limit = std::clamp(quantile(std::move(magnitudes), threshold_ratio), 1.0f, threshold_max);
      std::for_each(first, first + static_cast<std::ptrdiff_t>(per_item),
                    [limit](float& value) { value = std::clamp(value, -limit, limit) / limit; });
    }
  } else if (clip) {
    for (auto& value : x0.data) value = std::clamp(value, -clip_range, clip_range);
  }
  return x0;
}

X0Limit read_x0_limit(const SchedulerConfig& config, bool thresholding_keys, bool clip_keys) {
  // diffusers reads each of these keys only when its limit applies, so an unused one may be null.
  X0Limit limit;
  if (thresholding_keys) {
    limit.thresholding = config.get_bool("thresholding");
    if (limit.thresholding) {
      limit.threshold_ratio = static_cast<float>(config.get_number("dynamic_thresholding_ratio"));
      if (!(limit.threshold_ratio >= 0.0f && limit.threshold_ratio <= 1.0f)) {
        config.fail("dynamic_thresholding_ratio", "expected a number in [0, 1]");
      }
      // null: torch.clamp(s, min=1, max=None) leaves the threshold unbounded above.
      limit.threshold_max = config.is_null("sample_max_value")
                                ? std::numeric_limits<float>::infinity()
                                : static_cast<float>(config.get_number("sample_max_value"));
      if (!(limit.threshold_max >= 1.0f)) config.fail("sample_max_value", "expected null or a number >= 1");
    } else {
      config.check_unused_number("dynamic_thresholding_ratio");
      config.check_unused_number("sample_max_value");
    }
  }
  if (clip_keys) {
    limit.clip = config.get_bool("clip_sample");
    if (limit.clip && !limit.thresholding) {
      limit.clip_range = static_cast<float>(config.get_number("clip_sample_range"));
      if (!(limit.clip_range > 0.0f)) config.fail("clip_sample_range", "expected a positive number");
    } else {
      config.check_unused_number("clip_sample_range");
    }
  }
  return limit;
}

HostTensor x0_from_sigma_output(PredictionType prediction, const HostTensor& sample, const HostTensor& output,
                                float sigma) {
  switch (prediction) {
    case PredictionType::kEpsilon:
      return map_samples(sample, output, [sigma](float x, float e) { return x - sigma * e; });
    case PredictionType::kSample:
      return output;
    case PredictionType::kVPrediction: {
      const float output_scale = -sigma / std::sqrt(sigma * sigma + 1.0f);
      const float variance = sigma * sigma + 1.0f;
      return map_samples(sample, output, [&](float x, float v) { return v * output_scale + x / variance; });
    }
  }
  return output;
}

HostTensor x0_from_alpha_output(PredictionType prediction, const HostTensor& sample, const HostTensor& output,
                                float root_alpha, float root_beta) {
  switch (prediction) {
    case PredictionType::kEpsilon:
      return map_samples(sample, output, [&](float x, float e) { return (x - root_beta * e) / root_alpha; });
    case PredictionType::kSample:
      return output;
    case PredictionType::kVPrediction:
      return map_samples(sample, output, [&](float x, float v) { return root_alpha * x - root_beta * v; });
  }
  return output;
}

}  // namespace websd::schedulers
