// DPM-Solver++ multistep (Lu et al. 2022), diffusers' DPMSolverMultistepScheduler with
// algorithm_type "dpmsolver++" (orders 1-3, midpoint or heun second-order update): "dpmpp_2m" is the
// default order 2, "dpmpp_2m_karras" adds use_karras_sigmas. Keeps the run's converted model outputs.
// Not thread-safe (see Scheduler).
#pragma once

#include "pipeline/schedulers/multistep_scheduler.h"

namespace websd::schedulers {

class DpmSolverScheduler final : public MultistepScheduler {
 public:
  static constexpr const char* kClassName = "DPMSolverMultistepScheduler";
  static std::vector<ConfigKey> config_keys();

  DpmSolverScheduler(const nlohmann::json& config, const std::string& origin);

 private:
  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;

  HostTensor first_order_update(const HostTensor& sample, int index) const;
  HostTensor second_order_update(const HostTensor& sample, int index) const;
  HostTensor third_order_update(const HostTensor& sample, int index) const;

  bool midpoint_;  // solver_type "midpoint", else "heun"
  bool euler_at_final_;
  bool final_sigma_zero_;
  bool karras_;
  int last_timestep_;  // the schedule's bound after lambda_min_clipped
};

}  // namespace websd::schedulers
