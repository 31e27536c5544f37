#include "pipeline/schedulers/sigma_math.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "pipeline/schedulers/numpy_compat.h"

namespace websd::schedulers {

std::vector<double> karras_sigmas(double sigma_min, double sigma_max, int count) {
  constexpr double kRho = 7.0;
  const double min_inv_rho = std::pow(sigma_min, 1 / kRho);
  const double max_inv_rho = std::pow(sigma_max, 1 / kRho);
  std::vector<double> sigmas = numpy_linspace(0, 1, count);
  for (auto& ramp : sigmas) ramp = std::pow(max_inv_rho + ramp * (min_inv_rho - max_inv_rho), kRho);
  return sigmas;
}

std::optional<double> read_karras_bound(const SchedulerConfig& config, const std::string& key, bool karras) {
  if (!karras) {
    config.check_unused_number(key);
    return std::nullopt;
  }
  const auto bound = config.get_optional_number(key);
  if (bound && !(*bound > 0)) config.fail(key, "expected null or a positive number");
  return bound;
}

std::vector<float> log_f32(const std::vector<float>& values) {
  std::vector<float> logs(values.size());
  std::transform(values.begin(), values.end(), logs.begin(), [](float value) { return std::log(value); });
  return logs;
}

double sigma_to_timestep(double sigma, const std::vector<float>& log_sigmas) {
  const double log_sigma = std::log(std::max(sigma, 1e-10));
  // Last index whose log-sigma is <= log_sigma (0 if none), kept below the final pair.
  std::size_t low = 0;
  for (std::size_t i = 0; i < log_sigmas.size(); ++i) {
    if (log_sigma - static_cast<double>(log_sigmas[i]) >= 0) low = i;
  }
  low = std::min(low, log_sigmas.size() - 2);
  const float low_value = log_sigmas[low];
  const float high_value = log_sigmas[low + 1];
  // numpy: float32 - float64 promotes to float64, float32 - float32 stays float32.
  const float span = low_value - high_value;
  const double weight = std::clamp((static_cast<double>(low_value) - log_sigma) / static_cast<double>(span), 0.0, 1.0);
  return (1 - weight) * static_cast<double>(low) + weight * static_cast<double>(low + 1);
}

VpCoefficients vp_coefficients(float sigma) {
  const float alpha = 1.0f / std::sqrt(sigma * sigma + 1.0f);
  const float sigma_t = sigma * alpha;
  return {alpha, sigma_t, std::log(alpha) - std::log(sigma_t)};
}

}  // namespace websd::schedulers
