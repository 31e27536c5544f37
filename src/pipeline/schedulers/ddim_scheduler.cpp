#include "pipeline/schedulers/ddim_scheduler.h"

#include <cmath>

namespace websd::schedulers {

std::vector<ConfigKey> DdimScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},
          {"beta_start", 0.0001},
          {"beta_end", 0.02},
          {"beta_schedule", "linear"},
          {"trained_betas", nullptr},
          {"clip_sample", true},
          {"set_alpha_to_one", true},
          {"steps_offset", 0},
          {"prediction_type", "epsilon"},
          {"thresholding", false},
          {"dynamic_thresholding_ratio", 0.995},
          {"clip_sample_range", 1.0},
          {"sample_max_value", 1.0},
          {"timestep_spacing", "leading"},
          {"rescale_betas_zero_snr", false}};
}

DdimScheduler::DdimScheduler(const nlohmann::json& config, const std::string& origin)
    : AlphaScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kRescale),
      prediction_(read_prediction_type(config_, true)),
      x0_limit_(read_x0_limit(config_, true, true)),
      spacing_(read_timestep_spacing(config_)),
      steps_offset_(read_steps_offset(config_, spacing_, num_train_timesteps())),
      final_alpha_cumprod_(config_.get_bool("set_alpha_to_one") ? 1.0f : noise_.alphas_cumprod.front()) {}

void DdimScheduler::build_schedule(int count) {
  timesteps_ = spaced_timesteps(spacing_, num_train_timesteps(), count, steps_offset_, true);
  sigmas_.clear();
  num_inference_steps_ = count;
}

HostTensor DdimScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                      TorchGenerator* /*generator*/) {
  const int t = train_index(timestep);
  const int prev_t = t - num_train_timesteps() / num_inference_steps_;
  const float alpha = alpha_cumprod_at(t);
  const float alpha_prev = prev_t >= 0 ? alpha_cumprod_at(prev_t) : final_alpha_cumprod_;
  const float beta = 1.0f - alpha;
  const float root_alpha = std::sqrt(alpha);
  const float root_beta = std::sqrt(beta);

  HostTensor x0;
  HostTensor epsilon;
  switch (prediction_) {
    case PredictionType::kEpsilon:
      x0 = map_samples(sample, model_output, [&](float x, float e) { return (x - root_beta * e) / root_alpha; });
      epsilon = model_output;
      break;
    case PredictionType::kSample:
      x0 = model_output;
      epsilon =
          map_samples(sample, model_output, [&](float x, float x0v) { return (x - root_alpha * x0v) / root_beta; });
      break;
    case PredictionType::kVPrediction:
      x0 = map_samples(sample, model_output, [&](float x, float v) { return root_alpha * x - root_beta * v; });
      epsilon = map_samples(sample, model_output, [&](float x, float v) { return root_alpha * v + root_beta * x; });
      break;
  }
  x0 = x0_limit_.apply(std::move(x0));

  // eta = 0: no variance term, so the direction pointing to x_t carries all of 1 - alpha_prev.
  const float direction_scale = std::sqrt(1.0f - alpha_prev - 0.0f);
  const float signal_scale = std::sqrt(alpha_prev);
  return map_samples(x0, epsilon, [&](float x0v, float e) { return signal_scale * x0v + direction_scale * e; });
}

}  // namespace websd::schedulers
