#include "pipeline/schedulers/ddpm_scheduler.h"

#include <algorithm>
#include <cmath>

namespace websd::schedulers {

std::vector<ConfigKey> DdpmScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},
          {"beta_start", 0.0001},
          {"beta_end", 0.02},
          {"beta_schedule", "linear"},
          {"trained_betas", nullptr},
          {"variance_type", "fixed_small"},
          {"clip_sample", true},
          {"prediction_type", "epsilon"},
          {"thresholding", false},
          {"dynamic_thresholding_ratio", 0.995},
          {"clip_sample_range", 1.0},
          {"sample_max_value", 1.0},
          {"timestep_spacing", "leading"},
          {"steps_offset", 0},
          {"rescale_betas_zero_snr", false}};
}

DdpmScheduler::DdpmScheduler(const nlohmann::json& config, const std::string& origin)
    : AlphaScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kRescale),
      prediction_(read_prediction_type(config_, true)),
      x0_limit_(read_x0_limit(config_, true, true)),
      spacing_(read_timestep_spacing(config_)),
      steps_offset_(read_steps_offset(config_, spacing_, num_train_timesteps())) {
  // "learned"/"learned_range" split a doubled model output and "fixed_large_log" takes the square root
  // of a logarithm (NaN noise in diffusers); SD checkpoints use none of them. null falls through
  // diffusers' _get_variance with the clamped posterior variance, which is "fixed_small".
  const std::string variance =
      config_.is_null("variance_type")
          ? "fixed_small"
          : config_.get_choice("variance_type", {"fixed_small", "fixed_small_log", "fixed_large"});
  variance_ = variance == "fixed_small"
                  ? Variance::kFixedSmall
                  : (variance == "fixed_small_log" ? Variance::kFixedSmallLog : Variance::kFixedLarge);
}

void DdpmScheduler::build_schedule(int count) {
  timesteps_ = spaced_timesteps(spacing_, num_train_timesteps(), count, steps_offset_, true);
  sigmas_.clear();
  num_inference_steps_ = count;
}

int DdpmScheduler::previous_timestep(int t) const {
  const auto found = std::find(timesteps_.begin(), timesteps_.end(), static_cast<double>(t));
  if (found == timesteps_.end()) {
    fail("timestep " + std::to_string(t) + " is not in the schedule (pass one of timesteps())");
  }
  return found + 1 == timesteps_.end() ? -1 : static_cast<int>(*(found + 1));
}

HostTensor DdpmScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                      TorchGenerator* generator) {
  const int t = train_index(timestep);
  const int prev_t = previous_timestep(t);
  const float alpha = alpha_cumprod_at(t);
  const float alpha_prev = prev_t >= 0 ? alpha_cumprod_at(prev_t) : 1.0f;
  const float beta = 1.0f - alpha;
  const float beta_prev = 1.0f - alpha_prev;
  const float current_alpha = alpha / alpha_prev;
  const float current_beta = 1.0f - current_alpha;
  const float root_alpha = std::sqrt(alpha);
  const float root_beta = std::sqrt(beta);

  HostTensor x0 = x0_from_alpha_output(prediction_, sample, model_output, root_alpha, root_beta);
  x0 = x0_limit_.apply(std::move(x0));

  // Formula (7) of arXiv 2006.11239: the posterior mean of x_{t-1}.
  const float x0_scale = std::sqrt(alpha_prev) * current_beta / beta;
  const float sample_scale = std::sqrt(current_alpha) * beta_prev / beta;
  HostTensor prev = map_samples(x0, sample, [&](float x0v, float x) { return x0_scale * x0v + sample_scale * x; });
  if (t == 0) return prev;

  const HostTensor noise = generator->randn(model_output.shape);
  // (1 - alpha_prev) / (1 - alpha) * beta_t, clamped so its log stays finite.
  const float variance = std::max(beta_prev / beta * current_beta, 1e-20f);
  float noise_scale = 0.0f;
  switch (variance_) {
    case Variance::kFixedSmall:
      noise_scale = std::sqrt(variance);
      break;
    case Variance::kFixedSmallLog:
      noise_scale = std::exp(0.5f * std::log(variance));
      break;
    case Variance::kFixedLarge:
      noise_scale = std::sqrt(current_beta);
      break;
  }
  return map_samples(prev, noise, [&](float p, float n) { return p + noise_scale * n; });
}

}  // namespace websd::schedulers
