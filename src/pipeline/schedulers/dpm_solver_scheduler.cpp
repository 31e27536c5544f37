#include "pipeline/schedulers/dpm_solver_scheduler.h"

#include <cmath>
#include <limits>

namespace websd::schedulers {

std::vector<ConfigKey> DpmSolverScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},
          {"beta_start", 0.0001},
          {"beta_end", 0.02},
          {"beta_schedule", "linear"},
          {"trained_betas", nullptr},
          {"solver_order", 2},
          {"prediction_type", "epsilon"},
          {"thresholding", false},
          {"dynamic_thresholding_ratio", 0.995},
          {"sample_max_value", 1.0},
          {"algorithm_type", "dpmsolver++"},
          {"solver_type", "midpoint"},
          {"lower_order_final", true},
          {"euler_at_final", false},
          {"use_karras_sigmas", false},
          {"use_exponential_sigmas", false},
          {"use_beta_sigmas", false},
          {"use_lu_lambdas", false},
          {"use_flow_sigmas", false},
          {"flow_shift", 1.0},
          {"final_sigmas_type", "zero"},
          {"lambda_min_clipped", -std::numeric_limits<double>::infinity()},
          {"variance_type", nullptr},
          {"timestep_spacing", "linspace"},
          {"steps_offset", 0},
          {"rescale_betas_zero_snr", false},
          {"use_dynamic_shifting", false},
          {"time_shift_type", "exponential"}};
}

DpmSolverScheduler::DpmSolverScheduler(const nlohmann::json& config, const std::string& origin)
    : MultistepScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kRescaleAndClamp, true) {
  // diffusers maps these legacy names when it loads a config; the resolved config shows the result.
  if (config_.get("algorithm_type") == "deis") config_.replace("algorithm_type", "dpmsolver++");
  const auto& solver_type = config_.get("solver_type");
  if (solver_type == "logrho" || solver_type == "bh1" || solver_type == "bh2")
    config_.replace("solver_type", "midpoint");

  config_.get_choice("algorithm_type", {"dpmsolver++"});
  midpoint_ = config_.get_choice("solver_type", {"midpoint", "heun"}) == "midpoint";
  euler_at_final_ = config_.get_bool("euler_at_final");
  karras_ = config_.get_bool("use_karras_sigmas");
  final_sigma_zero_ = config_.get_choice("final_sigmas_type", {"zero", "sigma_min"}) == "zero";
  for (const char* key : {"use_exponential_sigmas", "use_beta_sigmas", "use_lu_lambdas", "use_flow_sigmas"}) {
    config_.require_false(key, "only the training and Karras sigma schedules are implemented");
  }
  // Dynamic shifting only sets flow_shift, which only the flow sigmas (refused above) read: without
  // them diffusers accepts the flag and it changes nothing, so websd reads and ignores it too.
  config_.get_bool("use_dynamic_shifting");
  config_.check_unused_string("time_shift_type");
  config_.check_unused_number("flow_shift");
  // Only "learned" and "learned_range" do anything (they keep 3 of the model's output channels);
  // any other value, such as a DDPM config's "fixed_small", is ignored by diffusers.
  const auto& variance = config_.get("variance_type");
  if (!variance.is_null() && !variance.is_string()) config_.fail("variance_type", "expected a string or null");
  if (variance == "learned" || variance == "learned_range") {
    config_.fail("variance_type", "not supported by websd (learned variances need a model that predicts them)");
  }

  // Clip the schedule where lambda(t) = log(alpha_t / sigma_t) falls below lambda_min_clipped.
  const double lambda_min = config_.get_number("lambda_min_clipped");
  int clipped = 0;
  for (const float alpha_cumprod : noise_.alphas_cumprod) {
    const float lambda = std::log(std::sqrt(alpha_cumprod)) - std::log(std::sqrt(1.0f - alpha_cumprod));
    if (static_cast<double>(lambda) < lambda_min) ++clipped;
  }
  last_timestep_ = num_train_timesteps() - clipped;
  if (last_timestep_ < 1) config_.fail("lambda_min_clipped", "clips away every training timestep");
}

void DpmSolverScheduler::build_schedule(int count) {
  SigmaPlan plan;
  plan.last_timestep = last_timestep_;
  plan.karras = karras_;
  plan.round_karras_timesteps = config_.get("beta_schedule") != "squaredcos_cap_v2";
  plan.final_sigma_min = !final_sigma_zero_;
  build_multistep_schedule(count, plan);
}

HostTensor DpmSolverScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                           TorchGenerator* /*generator*/) {
  const int index = step_index_for(timestep);
  const int steps = static_cast<int>(timesteps_.size());
  // Lower orders at the end stabilise short schedules; a final step of zero width must be first order.
  const bool lower_order_final =
      index == steps - 1 && (euler_at_final_ || (lower_order_final_ && steps < 15) || final_sigma_zero_ ||
                             sigmas_[static_cast<std::size_t>(index + 1)] == sigmas_[static_cast<std::size_t>(index)]);
  const bool lower_order_second = index == steps - 2 && lower_order_final_ && steps < 15;

  remember_output(to_data_prediction(model_output, sample, index));
  HostTensor prev;
  if (solver_order_ == 1 || lower_order_nums_ < 1 || lower_order_final) {
    prev = first_order_update(sample, index);
  } else if (solver_order_ == 2 || lower_order_nums_ < 2 || lower_order_second) {
    prev = second_order_update(sample, index);
  } else {
    prev = third_order_update(sample, index);
  }
  if (lower_order_nums_ < solver_order_) ++lower_order_nums_;
  advance_step_index();
  return prev;
}

HostTensor DpmSolverScheduler::first_order_update(const HostTensor& sample, int index) const {
  const VpCoefficients t = vp_at(index + 1);
  const VpCoefficients s = vp_at(index);
  const float h = t.lambda - s.lambda;
  const float sample_scale = t.sigma / s.sigma;
  const float output_scale = t.alpha * (std::exp(-h) - 1.0f);
  return map_samples(sample, output_back(0), [&](float x, float m) { return sample_scale * x - output_scale * m; });
}

HostTensor DpmSolverScheduler::second_order_update(const HostTensor& sample, int index) const {
  const VpCoefficients t = vp_at(index + 1);
  const VpCoefficients s0 = vp_at(index);
  const VpCoefficients s1 = vp_at(index - 1);
  const float h = t.lambda - s0.lambda;
  const float h_0 = s0.lambda - s1.lambda;
  const float inverse_r0 = 1.0f / (h_0 / h);
  const HostTensor& m0 = output_back(0);
  const HostTensor d1 =
      map_samples(m0, output_back(1), [inverse_r0](float a, float b) { return inverse_r0 * (a - b); });
  const float sample_scale = t.sigma / s0.sigma;
  const float d0_scale = t.alpha * (std::exp(-h) - 1.0f);
  if (midpoint_) {
    const float d1_scale = 0.5f * d0_scale;
    return map_samples(sample, m0, d1,
                       [&](float x, float d0, float d1v) { return sample_scale * x - d0_scale * d0 - d1_scale * d1v; });
  }
  const float d1_scale = t.alpha * ((std::exp(-h) - 1.0f) / h + 1.0f);
  return map_samples(sample, m0, d1,
                     [&](float x, float d0, float d1v) { return sample_scale * x - d0_scale * d0 + d1_scale * d1v; });
}

HostTensor DpmSolverScheduler::third_order_update(const HostTensor& sample, int index) const {
  const VpCoefficients t = vp_at(index + 1);
  const VpCoefficients s0 = vp_at(index);
  const VpCoefficients s1 = vp_at(index - 1);
  const VpCoefficients s2 = vp_at(index - 2);
  const float h = t.lambda - s0.lambda;
  const float r0 = (s0.lambda - s1.lambda) / h;
  const float r1 = (s1.lambda - s2.lambda) / h;
  const float inverse_r0 = 1.0f / r0;
  const float inverse_r1 = 1.0f / r1;
  const HostTensor& m0 = output_back(0);
  const HostTensor d1_0 =
      map_samples(m0, output_back(1), [inverse_r0](float a, float b) { return inverse_r0 * (a - b); });
  const HostTensor d1_1 =
      map_samples(output_back(1), output_back(2), [inverse_r1](float a, float b) { return inverse_r1 * (a - b); });
  const float d1_weight = r0 / (r0 + r1);
  const float d2_weight = 1.0f / (r0 + r1);
  const HostTensor d1 = map_samples(d1_0, d1_1, [d1_weight](float a, float b) { return a + d1_weight * (a - b); });
  const HostTensor d2 = map_samples(d1_0, d1_1, [d2_weight](float a, float b) { return d2_weight * (a - b); });
  const float e = std::exp(-h) - 1.0f;
  const float sample_scale = t.sigma / s0.sigma;
  const float d0_scale = t.alpha * e;
  const float d1_scale = t.alpha * (e / h + 1.0f);
  const float d2_scale = t.alpha * ((std::exp(-h) - 1.0f + h) / (h * h) - 0.5f);
  const HostTensor partial = map_samples(
      sample, m0, d1, [&](float x, float d0, float d1v) { return sample_scale * x - d0_scale * d0 + d1_scale * d1v; });
  return map_samples(partial, d2, [d2_scale](float p, float d2v) { return p - d2_scale * d2v; });
}

}  // namespace websd::schedulers
