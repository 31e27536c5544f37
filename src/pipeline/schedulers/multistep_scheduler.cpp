#include "pipeline/schedulers/multistep_scheduler.h"

#include <cmath>

#include "pipeline/schedulers/numpy_compat.h"

namespace websd::schedulers {

MultistepScheduler::MultistepScheduler(SchedulerConfig config, ZeroSnr zero_snr, bool sample_prediction_supported)
    : Scheduler(std::move(config), zero_snr),
      prediction_(read_prediction_type(config_, sample_prediction_supported)),
      x0_limit_(read_x0_limit(config_, true, false)),
      spacing_(read_timestep_spacing(config_)),
      steps_offset_(read_steps_offset(config_, spacing_, num_train_timesteps())),
      solver_order_(static_cast<int>(config_.get_int("solver_order", 1, 3))),
      lower_order_final_(config_.get_bool("lower_order_final")) {}

void MultistepScheduler::build_multistep_schedule(int count, const SigmaPlan& plan) {
  std::vector<double> timesteps =
      multistep_spaced_timesteps(spacing_, num_train_timesteps(), plan.last_timestep, count, steps_offset_);
  const std::vector<float> train = train_sigmas(noise_);
  std::vector<double> sigmas;
  if (plan.karras) {
    const std::vector<float> log_sigmas = log_f32(train);
    sigmas = karras_sigmas(plan.sigma_min.value_or(train.front()), plan.sigma_max.value_or(train.back()), count);
    timesteps.clear();
    for (const double sigma : sigmas) {
      const double t = sigma_to_timestep(sigma, log_sigmas);
      timesteps.push_back(std::trunc(plan.round_karras_timesteps ? numpy_round(t) : t));  // then cast to int64
    }
  } else {
    for (const double t : timesteps) sigmas.push_back(numpy_interp_index(t, train));
  }
  double final_sigma = 0.0;
  if (plan.final_sigma_min)
    final_sigma = plan.karras && plan.final_is_last_karras_sigma ? sigmas.back() : train.front();
  sigmas.push_back(final_sigma);
  for (auto& sigma : sigmas) sigma = static_cast<float>(sigma);

  timesteps_ = std::move(timesteps);
  sigmas_ = std::move(sigmas);
  num_inference_steps_ = static_cast<int>(timesteps_.size());
}

int MultistepScheduler::index_for_timestep(double timestep) const {
  std::vector<int> matches;
  for (std::size_t i = 0; i < timesteps_.size(); ++i) {
    if (timesteps_[i] == timestep) matches.push_back(static_cast<int>(i));
  }
  if (matches.empty()) return static_cast<int>(timesteps_.size()) - 1;
  return matches.size() > 1 ? matches[1] : matches[0];
}

HostTensor MultistepScheduler::to_data_prediction(const HostTensor& model_output, const HostTensor& sample,
                                                  int index) const {
  const VpCoefficients vp = vp_at(index);
  HostTensor x0;
  switch (prediction_) {
    case PredictionType::kEpsilon:
      x0 = map_samples(sample, model_output, [vp](float x, float e) { return (x - vp.sigma * e) / vp.alpha; });
      break;
    case PredictionType::kSample:
      x0 = model_output;
      break;
    case PredictionType::kVPrediction:
      x0 = map_samples(sample, model_output, [vp](float x, float v) { return vp.alpha * x - vp.sigma * v; });
      break;
  }
  return x0_limit_.apply(std::move(x0));
}

HostTensor MultistepScheduler::to_noise_prediction(const HostTensor& model_output, const HostTensor& sample,
                                                   int index) const {
  const VpCoefficients vp = vp_at(index);
  switch (prediction_) {
    case PredictionType::kSample:
      return map_samples(sample, model_output, [vp](float x, float x0) { return (x - vp.alpha * x0) / vp.sigma; });
    case PredictionType::kVPrediction:
      return map_samples(sample, model_output, [vp](float x, float v) { return vp.alpha * v + vp.sigma * x; });
    case PredictionType::kEpsilon:
      break;
  }
  return model_output;
}

void MultistepScheduler::remember_output(HostTensor converted) {
  model_outputs_.push_back(std::move(converted));
  if (static_cast<int>(model_outputs_.size()) > solver_order_) model_outputs_.erase(model_outputs_.begin());
}

void MultistepScheduler::reset_history() {
  model_outputs_.clear();
  lower_order_nums_ = 0;
}

HostTensor MultistepScheduler::add_noise(const HostTensor& original, const HostTensor& noise, double timestep) const {
  require_timesteps("add_noise");
  if (original.shape != noise.shape) {
    fail("add_noise: sample " + shape_to_string(original.shape) + " and noise " + shape_to_string(noise.shape) +
         " differ in shape");
  }
  const VpCoefficients vp = vp_at(noise_index_for(timestep));
  return map_samples(original, noise, [vp](float x, float n) { return vp.alpha * x + vp.sigma * n; });
}

}  // namespace websd::schedulers
