#include "pipeline/schedulers/heun_discrete_scheduler.h"

#include <cmath>

namespace websd::schedulers {

std::vector<ConfigKey> HeunDiscreteScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},
          {"beta_start", 0.00085},
          {"beta_end", 0.012},
          {"beta_schedule", "linear"},
          {"trained_betas", nullptr},
          {"prediction_type", "epsilon"},
          {"use_karras_sigmas", false},
          {"use_exponential_sigmas", false},
          {"use_beta_sigmas", false},
          {"clip_sample", false},
          {"clip_sample_range", 1.0},
          {"timestep_spacing", "linspace"},
          {"steps_offset", 0}};
}

HeunDiscreteScheduler::HeunDiscreteScheduler(const nlohmann::json& config, const std::string& origin)
    : SigmaScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kNoKey),
      prediction_(read_prediction_type(config_, true)),
      x0_limit_(read_x0_limit(config_, false, true)),
      karras_(read_karras_flag()) {}

void HeunDiscreteScheduler::build_schedule(int count) {
  SigmaOptions options;
  options.karras = karras_;
  build_sigma_schedule(count, options);
  // Every sigma and timestep but the first (and the final sigma) is visited twice.
  std::vector<double> sigmas = {sigmas_.front()};
  for (std::size_t i = 1; i + 1 < sigmas_.size(); ++i) sigmas.insert(sigmas.end(), 2, sigmas_[i]);
  sigmas.push_back(sigmas_.back());
  std::vector<double> timesteps = {timesteps_.front()};
  for (std::size_t i = 1; i < timesteps_.size(); ++i) timesteps.insert(timesteps.end(), 2, timesteps_[i]);
  sigmas_ = std::move(sigmas);
  timesteps_ = std::move(timesteps);
}

HostTensor HeunDiscreteScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                              TorchGenerator* /*generator*/) {
  const int index = step_index_for(timestep);
  const bool predictor = !first_order_.has_value();
  const float sigma = predictor ? sigma_at(index) : sigma_at(index - 1);
  const float sigma_next = predictor ? sigma_at(index + 1) : sigma_at(index);
  // The model was evaluated at sigma (predictor) or at sigma_next (corrector).
  const float sigma_input = predictor ? sigma : sigma_next;

  HostTensor x0 = x0_from_sigma_output(prediction_, sample, model_output, sigma_input);
  x0 = x0_limit_.apply(std::move(x0));

  HostTensor prev;
  if (predictor) {
    HostTensor derivative = map_samples(sample, x0, [sigma](float x, float x0v) { return (x - x0v) / sigma; });
    const float dt = sigma_next - sigma;
    prev = map_samples(sample, derivative, [dt](float x, float d) { return x + d * dt; });
    first_order_ = FirstOrderState{std::move(derivative), dt, sample};
  } else {
    const HostTensor corrected = map_samples(sample, x0, first_order_->derivative, [&](float x, float x0v, float d0) {
      return (d0 + (x - x0v) / sigma_next) / 2.0f;
    });
    const float dt = first_order_->dt;
    prev = map_samples(first_order_->sample, corrected, [dt](float x, float d) { return x + d * dt; });
    first_order_.reset();
  }
  advance_step_index();
  return prev;
}

}  // namespace websd::schedulers
