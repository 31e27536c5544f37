#include "pipeline/schedulers/euler_discrete_scheduler.h"

#include <cmath>

#include "pipeline/schedulers/sample_math.h"
#include "pipeline/schedulers/sigma_math.h"

namespace websd::schedulers {
namespace {

// diffusers' Euler step still takes "original_sample" for "sample", "for backwards compatibility";
// the resolved config shows the name it stands for.
SchedulerConfig with_sample_alias(SchedulerConfig config) {
  if (config.get("prediction_type") == "original_sample") config.replace("prediction_type", "sample");
  return config;
}

}  // namespace

std::vector<ConfigKey> EulerDiscreteScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},     {"beta_start", 0.0001},        {"beta_end", 0.02},
          {"beta_schedule", "linear"},       {"trained_betas", nullptr},    {"prediction_type", "epsilon"},
          {"interpolation_type", "linear"},  {"use_karras_sigmas", false},  {"use_exponential_sigmas", false},
          {"use_beta_sigmas", false},        {"sigma_min", nullptr},        {"sigma_max", nullptr},
          {"timestep_spacing", "linspace"},  {"timestep_type", "discrete"}, {"steps_offset", 0},
          {"rescale_betas_zero_snr", false}, {"final_sigmas_type", "zero"}};
}

EulerDiscreteScheduler::EulerDiscreteScheduler(const nlohmann::json& config, const std::string& origin)
    : SigmaScheduler(with_sample_alias(SchedulerConfig(kClassName, config_keys(), config, origin)),
                     ZeroSnr::kRescaleAndClamp),
      prediction_(read_prediction_type(config_, true)) {
  config_.get_choice("interpolation_type", {"linear"});
  sigma_options_.karras = read_karras_flag();
  sigma_options_.sigma_min = read_karras_bound(config_, "sigma_min", sigma_options_.karras);
  sigma_options_.sigma_max = read_karras_bound(config_, "sigma_max", sigma_options_.karras);
  sigma_options_.final_sigma_min = config_.get_choice("final_sigmas_type", {"zero", "sigma_min"}) == "sigma_min";
  // null takes the discrete path: diffusers only asks whether the type is "continuous".
  continuous_timesteps_ = !config_.is_null("timestep_type") &&
                          config_.get_choice("timestep_type", {"discrete", "continuous"}) == "continuous" &&
                          prediction_ == PredictionType::kVPrediction;
}

void EulerDiscreteScheduler::build_schedule(int count) {
  build_sigma_schedule(count, sigma_options_);
  if (continuous_timesteps_) {
    for (std::size_t i = 0; i < timesteps_.size(); ++i) timesteps_[i] = 0.25f * std::log(sigma_at(static_cast<int>(i)));
  }
}

HostTensor EulerDiscreteScheduler::step_sample(const HostTensor& model_output, double timestep,
                                               const HostTensor& sample, TorchGenerator* /*generator*/) {
  const int index = step_index_for(timestep);
  const float sigma = sigma_at(index);
  HostTensor x0 = x0_from_sigma_output(prediction_, sample, model_output, sigma);
  const float dt = sigma_at(index + 1) - sigma;
  advance_step_index();
  // The ODE derivative (x - x0) / sigma, followed for dt.
  return map_samples(sample, x0, [&](float x, float x0v) { return x + (x - x0v) / sigma * dt; });
}

}  // namespace websd::schedulers
