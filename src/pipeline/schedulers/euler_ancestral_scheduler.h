// Euler ancestral, diffusers' EulerAncestralDiscreteScheduler: an Euler step down to sigma_down, then
// fresh noise of standard deviation sigma_up drawn from the generator at every step (the last draws
// too, scaled by zero, as diffusers does, so the stream stays aligned). Not thread-safe.
#pragma once

#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sigma_scheduler.h"

namespace websd::schedulers {

class EulerAncestralScheduler final : public SigmaScheduler {
 public:
  static constexpr const char* kClassName = "EulerAncestralDiscreteScheduler";
  static std::vector<ConfigKey> config_keys();

  EulerAncestralScheduler(const nlohmann::json& config, const std::string& origin);

  bool needs_generator() const override { return true; }

 private:
  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;

  PredictionType prediction_;
};

}  // namespace websd::schedulers
