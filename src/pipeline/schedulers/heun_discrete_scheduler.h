// Heun's method (Karras et al. 2022, Algorithm 1), diffusers' HeunDiscreteScheduler: every step but
// the last is an Euler predictor and a trapezoidal corrector, so the schedule lists each timestep
// after the first twice (2n - 1 model evaluations) and order() is 2. Keeps the predictor's state
// between the two calls. Not thread-safe (see Scheduler).
#pragma once

#include <optional>

#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sample_math.h"
#include "pipeline/schedulers/sigma_scheduler.h"

namespace websd::schedulers {

class HeunDiscreteScheduler final : public SigmaScheduler {
 public:
  static constexpr const char* kClassName = "HeunDiscreteScheduler";
  static std::vector<ConfigKey> config_keys();

  HeunDiscreteScheduler(const nlohmann::json& config, const std::string& origin);

  int order() const override { return 2; }

 private:
  struct FirstOrderState {
    HostTensor derivative;
    float dt;
    HostTensor sample;
  };

  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;
  void reset_history() override { first_order_.reset(); }

  PredictionType prediction_;
  X0Limit x0_limit_;
  bool karras_;
  std::optional<FirstOrderState> first_order_;  // set between the predictor and the corrector
};

}  // namespace websd::schedulers
