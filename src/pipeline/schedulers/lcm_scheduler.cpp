#include "pipeline/schedulers/lcm_scheduler.h"

#include <cmath>

#include "pipeline/schedulers/numpy_compat.h"

namespace websd::schedulers {

std::vector<ConfigKey> LcmScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},
          {"beta_start", 0.00085},
          {"beta_end", 0.012},
          {"beta_schedule", "scaled_linear"},
          {"trained_betas", nullptr},
          {"original_inference_steps", 50},
          {"clip_sample", false},
          {"clip_sample_range", 1.0},
          {"set_alpha_to_one", true},
          {"steps_offset", 0},
          {"prediction_type", "epsilon"},
          {"thresholding", false},
          {"dynamic_thresholding_ratio", 0.995},
          {"sample_max_value", 1.0},
          {"timestep_spacing", "leading"},
          {"timestep_scaling", 10.0},
          {"rescale_betas_zero_snr", false}};
}

LcmScheduler::LcmScheduler(const nlohmann::json& config, const std::string& origin)
    : AlphaScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kRescale),
      prediction_(read_prediction_type(config_, true)),
      x0_limit_(read_x0_limit(config_, true, true)),
      original_inference_steps_(
          static_cast<int>(config_.get_int("original_inference_steps", 1, num_train_timesteps()))),
      timestep_scaling_(static_cast<float>(config_.get_number("timestep_scaling"))),
      final_alpha_cumprod_(config_.get_bool("set_alpha_to_one") ? 1.0f : noise_.alphas_cumprod.front()) {
  // diffusers keeps these keys but never reads them in LCMScheduler: any spacing name, or null, is
  // accepted; an offset must still be a whole number (or null) like everywhere else.
  config_.check_unused_string("timestep_spacing");
  if (!config_.is_null("steps_offset")) config_.get_int("steps_offset", 0, num_train_timesteps());
}

void LcmScheduler::build_schedule(int count) {
  if (count > original_inference_steps_) {
    fail(std::to_string(count) + " inference steps exceed original_inference_steps = " +
         std::to_string(original_inference_steps_) + " (the schedule is a subset of the distillation schedule)");
  }
  // The distillation schedule: every k-th training timestep, k = T // original_inference_steps.
  const int skip = num_train_timesteps() / original_inference_steps_;
  std::vector<double> distillation;
  for (int i = original_inference_steps_; i >= 1; --i) distillation.push_back(static_cast<double>(i * skip - 1));
  timesteps_.clear();
  for (const double position : numpy_linspace(0, static_cast<double>(distillation.size()), count, false)) {
    timesteps_.push_back(distillation[static_cast<std::size_t>(std::floor(position))]);
  }
  sigmas_.clear();
  num_inference_steps_ = count;
}

HostTensor LcmScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                     TorchGenerator* generator) {
  const int index = step_index_for(timestep);
  const int t = train_index(timestep);
  const bool last = index + 1 >= static_cast<int>(timesteps_.size());
  const int prev_t = last ? t : train_index(timesteps_[static_cast<std::size_t>(index + 1)]);
  const float alpha = alpha_cumprod_at(t);
  const float alpha_prev = prev_t >= 0 ? alpha_cumprod_at(prev_t) : final_alpha_cumprod_;
  const float root_alpha = std::sqrt(alpha);
  const float root_beta = std::sqrt(1.0f - alpha);

  // Consistency-model boundary conditions with sigma_data = 0.5 (a Python number divided by a tensor is
  // the tensor's reciprocal times the number, so round as torch does).
  const float scaled = static_cast<float>(t) * timestep_scaling_;
  const float skip_scale = (1.0f / (scaled * scaled + 0.25f)) * 0.25f;
  const float out_scale = scaled / std::sqrt(scaled * scaled + 0.25f);

  HostTensor x0 = x0_from_alpha_output(prediction_, sample, model_output, root_alpha, root_beta);
  x0 = x0_limit_.apply(std::move(x0));
  HostTensor denoised = map_samples(x0, sample, [&](float x0v, float x) { return out_scale * x0v + skip_scale * x; });
  advance_step_index();
  if (index == num_inference_steps_ - 1) return denoised;

  const HostTensor noise = generator->randn(model_output.shape);
  const float signal_scale = std::sqrt(alpha_prev);
  const float noise_scale = std::sqrt(1.0f - alpha_prev);
  return map_samples(denoised, noise, [&](float d, float n) { return signal_scale * d + noise_scale * n; });
}

}  // namespace websd::schedulers
