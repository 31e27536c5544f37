// PNDM (Liu et al. 2022), diffusers' PNDMScheduler: with skip_prk_steps (every SD checkpoint) the
// PLMS sampler, a 4th-order linear multistep over the model outputs; otherwise 12 Runge-Kutta
// evaluations warm it up first. Keeps the run's model outputs (ets) between steps.
// Not thread-safe (see Scheduler).
#pragma once

#include <vector>

#include "pipeline/schedulers/alpha_scheduler.h"
#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/timestep_spacing.h"

namespace websd::schedulers {

class PndmScheduler final : public AlphaScheduler {
 public:
  static constexpr const char* kClassName = "PNDMScheduler";
  static std::vector<ConfigKey> config_keys();

  PndmScheduler(const nlohmann::json& config, const std::string& origin);

 private:
  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;
  void reset_history() override;

  HostTensor step_prk(const HostTensor& model_output, int timestep, const HostTensor& sample);
  HostTensor step_plms(const HostTensor& model_output, int timestep, const HostTensor& sample);
  // Formula (9) of arXiv 2202.09778: the sample at prev_timestep from the one at timestep.
  HostTensor previous_sample(const HostTensor& sample, int timestep, int prev_timestep,
                             const HostTensor& model_output) const;

  PredictionType prediction_;
  TimestepSpacing spacing_;
  int steps_offset_;
  bool skip_prk_steps_;
  float final_alpha_cumprod_;
  std::vector<double> prk_timesteps_;

  // The run's history.
  std::vector<HostTensor> ets_;
  HostTensor runge_kutta_sum_;  // cur_model_output; empty when diffusers holds the integer 0
  HostTensor saved_sample_;     // cur_sample; empty when None
  int counter_ = 0;
};

}  // namespace websd::schedulers
