// DDIM (Song et al. 2020), diffusers' DDIMScheduler with eta = 0: deterministic steps between
// integer timesteps, prev_t = t - T // n. Not thread-safe (see Scheduler).
#pragma once

#include "pipeline/schedulers/alpha_scheduler.h"
#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sample_math.h"
#include "pipeline/schedulers/timestep_spacing.h"

namespace websd::schedulers {

class DdimScheduler final : public AlphaScheduler {
 public:
  static constexpr const char* kClassName = "DDIMScheduler";
  static std::vector<ConfigKey> config_keys();

  DdimScheduler(const nlohmann::json& config, const std::string& origin);

 private:
  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;

  PredictionType prediction_;
  X0Limit x0_limit_;
  TimestepSpacing spacing_;
  int steps_offset_;
  float final_alpha_cumprod_;
};

}  // namespace websd::schedulers
