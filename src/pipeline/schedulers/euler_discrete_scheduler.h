// Euler (Karras et al. 2022, Algorithm 2 with s_churn = 0), diffusers' EulerDiscreteScheduler: one
// explicit Euler step of the probability-flow ODE per timestep; "euler_karras" is this class with
// use_karras_sigmas. Not thread-safe (see Scheduler).
#pragma once

#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sigma_scheduler.h"

namespace websd::schedulers {

class EulerDiscreteScheduler final : public SigmaScheduler {
 public:
  static constexpr const char* kClassName = "EulerDiscreteScheduler";
  static std::vector<ConfigKey> config_keys();

  EulerDiscreteScheduler(const nlohmann::json& config, const std::string& origin);

 private:
  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;

  PredictionType prediction_;
  SigmaOptions sigma_options_;
  bool continuous_timesteps_;  // timestep_type "continuous" with v_prediction: t = 0.25 * log(sigma)
};

}  // namespace websd::schedulers
