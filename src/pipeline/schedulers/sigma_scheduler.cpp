#include "pipeline/schedulers/sigma_scheduler.h"

#include <algorithm>
#include <cmath>

#include "pipeline/schedulers/numpy_compat.h"
#include "pipeline/schedulers/sample_math.h"
#include "pipeline/schedulers/sigma_math.h"

namespace websd::schedulers {

SigmaScheduler::SigmaScheduler(SchedulerConfig config, ZeroSnr zero_snr)
    : Scheduler(std::move(config), zero_snr),
      spacing_(read_timestep_spacing(config_)),
      steps_offset_(read_steps_offset(config_, spacing_, num_train_timesteps())) {}

bool SigmaScheduler::read_karras_flag() const {
  config_.require_false("use_exponential_sigmas", "only Karras sigmas are implemented");
  config_.require_false("use_beta_sigmas", "only Karras sigmas are implemented");
  return config_.get_bool("use_karras_sigmas");
}

void SigmaScheduler::build_sigma_schedule(int count, const SigmaOptions& options) {
  const std::vector<float> train = train_sigmas(noise_);
  std::vector<double> timesteps = spaced_timesteps(spacing_, num_train_timesteps(), count, steps_offset_, false);
  for (auto& t : timesteps) t = static_cast<float>(t);  // numpy builds these in float32

  std::vector<double> sigmas;
  for (const double t : timesteps) sigmas.push_back(numpy_interp_index(t, train));
  if (options.karras) {
    const std::vector<float> log_sigmas = log_f32(train);
    sigmas =
        karras_sigmas(options.sigma_min.value_or(sigmas.back()), options.sigma_max.value_or(sigmas.front()), count);
    timesteps.clear();
    for (const double sigma : sigmas) timesteps.push_back(static_cast<float>(sigma_to_timestep(sigma, log_sigmas)));
  }
  sigmas.push_back(options.final_sigma_min ? train.front() : 0.0);
  for (auto& sigma : sigmas) sigma = static_cast<float>(sigma);

  timesteps_ = std::move(timesteps);
  sigmas_ = std::move(sigmas);
  num_inference_steps_ = count;
}

double SigmaScheduler::init_noise_sigma() const {
  require_timesteps("init_noise_sigma");
  const auto max_sigma = static_cast<float>(*std::max_element(sigmas_.begin(), sigmas_.end()));
  if (spacing_ != TimestepSpacing::kLeading) return max_sigma;
  return std::sqrt(max_sigma * max_sigma + 1.0f);
}

HostTensor SigmaScheduler::scale_model_input(const HostTensor& sample, double timestep) {
  require_timesteps("scale_model_input");
  const float sigma = sigma_at(step_index_for(timestep));
  const float scale = std::sqrt(sigma * sigma + 1.0f);
  return map_samples(sample, [scale](float x) { return x / scale; });
}

HostTensor SigmaScheduler::add_noise(const HostTensor& original, const HostTensor& noise, double timestep) const {
  require_timesteps("add_noise");
  if (original.shape != noise.shape) {
    fail("add_noise: sample " + shape_to_string(original.shape) + " and noise " + shape_to_string(noise.shape) +
         " differ in shape");
  }
  const float sigma = sigma_at(noise_index_for(timestep));
  return map_samples(original, noise, [sigma](float x, float n) { return x + n * sigma; });
}

}  // namespace websd::schedulers
