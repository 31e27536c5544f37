// Latent Consistency Models (Luo et al. 2023), diffusers' LCMScheduler: timesteps picked from the
// distillation schedule of original_inference_steps; each step denoises with the consistency
// boundary conditions and re-noises to the next timestep with one draw from the generator (none on the
// last step). Not thread-safe (see Scheduler).
#pragma once

#include "pipeline/schedulers/alpha_scheduler.h"
#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sample_math.h"

namespace websd::schedulers {

class LcmScheduler final : public AlphaScheduler {
 public:
  static constexpr const char* kClassName = "LCMScheduler";
  static std::vector<ConfigKey> config_keys();

  LcmScheduler(const nlohmann::json& config, const std::string& origin);

  bool needs_generator() const override { return true; }
  bool has_begin_index() const override { return true; }

 private:
  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;

  PredictionType prediction_;
  X0Limit x0_limit_;
  int original_inference_steps_;
  float timestep_scaling_;
  float final_alpha_cumprod_;
};

}  // namespace websd::schedulers
