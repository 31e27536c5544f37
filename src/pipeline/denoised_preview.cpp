#include "pipeline/denoised_preview.h"

#include <algorithm>
#include <cmath>

#include "pipeline/schedulers/sample_math.h"

namespace websd {

HostTensor denoised_preview(const schedulers::Scheduler& scheduler, std::size_t position, const HostTensor& prediction,
                            const HostTensor& sample) {
  const schedulers::PredictionType type = scheduler.prediction_type();
  const std::vector<double>& sigmas = scheduler.sigmas();
  if (scheduler.init_noise_sigma() > 1.0 && position < sigmas.size()) {
    return schedulers::x0_from_sigma_output(type, sample, prediction, static_cast<float>(sigmas[position]));
  }
  const std::vector<float>& alphas = scheduler.alphas_cumprod();
  const std::vector<double>& timesteps = scheduler.timesteps();
  if (alphas.empty() || position >= timesteps.size()) return sample;
  const double rounded = std::round(timesteps[position]);
  const auto index = static_cast<std::size_t>(std::clamp(rounded, 0.0, static_cast<double>(alphas.size() - 1)));
  const float alpha = alphas[index];
  return schedulers::x0_from_alpha_output(type, sample, prediction, std::sqrt(alpha), std::sqrt(1.0f - alpha));
}

}  // namespace websd
