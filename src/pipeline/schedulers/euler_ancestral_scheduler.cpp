#include "pipeline/schedulers/euler_ancestral_scheduler.h"

#include <cmath>

#include "pipeline/schedulers/sample_math.h"

namespace websd::schedulers {

std::vector<ConfigKey> EulerAncestralScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},    {"beta_start", 0.0001},     {"beta_end", 0.02},
          {"beta_schedule", "linear"},      {"trained_betas", nullptr}, {"prediction_type", "epsilon"},
          {"timestep_spacing", "linspace"}, {"steps_offset", 0},        {"rescale_betas_zero_snr", false}};
}

EulerAncestralScheduler::EulerAncestralScheduler(const nlohmann::json& config, const std::string& origin)
    : SigmaScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kRescaleAndClamp),
      prediction_(read_prediction_type(config_, false)) {}

void EulerAncestralScheduler::build_schedule(int count) { build_sigma_schedule(count, {}); }

HostTensor EulerAncestralScheduler::step_sample(const HostTensor& model_output, double timestep,
                                                const HostTensor& sample, TorchGenerator* generator) {
  const int index = step_index_for(timestep);
  const float sigma = sigma_at(index);
  const HostTensor x0 = x0_from_sigma_output(prediction_, sample, model_output, sigma);

  // Split the step to sigma_to into a deterministic part down to sigma_down and fresh noise sigma_up.
  const float sigma_to = sigma_at(index + 1);
  const float from_squared = sigma * sigma;
  const float to_squared = sigma_to * sigma_to;
  const float sigma_up = std::sqrt(to_squared * (from_squared - to_squared) / from_squared);
  const float sigma_down = std::sqrt(to_squared - sigma_up * sigma_up);
  const float dt = sigma_down - sigma;
  const HostTensor deterministic =
      map_samples(sample, x0, [&](float x, float x0v) { return x + (x - x0v) / sigma * dt; });
  const HostTensor noise = generator->randn(model_output.shape);
  advance_step_index();
  return map_samples(deterministic, noise, [sigma_up](float x, float n) { return x + n * sigma_up; });
}

}  // namespace websd::schedulers
