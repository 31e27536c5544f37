// DDPM (Ho et al. 2020), diffusers' DDPMScheduler: ancestral sampling between integer timesteps,
// drawing one noise tensor from the generator at every step with t > 0. Variance types
// fixed_small, fixed_small_log and fixed_large. Not thread-safe (see Scheduler).
#pragma once

#include "pipeline/schedulers/alpha_scheduler.h"
#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sample_math.h"
#include "pipeline/schedulers/timestep_spacing.h"

namespace websd::schedulers {

class DdpmScheduler final : public AlphaScheduler {
 public:
  static constexpr const char* kClassName = "DDPMScheduler";
  static std::vector<ConfigKey> config_keys();

  DdpmScheduler(const nlohmann::json& config, const std::string& origin);

  bool needs_generator() const override { return true; }

 private:
  enum class Variance { kFixedSmall, kFixedSmallLog, kFixedLarge };

  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;
  // The timestep after `t` in the schedule, -1 after the last.
  int previous_timestep(int t) const;

  PredictionType prediction_;
  X0Limit x0_limit_;
  TimestepSpacing spacing_;
  int steps_offset_;
  Variance variance_;
};

}  // namespace websd::schedulers
