// Linear multistep (k-diffusion's LMS), diffusers' LMSDiscreteScheduler: the new sample follows up
// to four past ODE derivatives weighted by integrals of their Lagrange basis polynomials over the
// step's sigma interval. Keeps the run's derivatives. Not thread-safe (see Scheduler).
#pragma once

#include <deque>

#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sigma_scheduler.h"

namespace websd::schedulers {

class LmsDiscreteScheduler final : public SigmaScheduler {
 public:
  static constexpr const char* kClassName = "LMSDiscreteScheduler";
  static constexpr int kOrder = 4;  // diffusers' step(order=4) default
  static std::vector<ConfigKey> config_keys();

  LmsDiscreteScheduler(const nlohmann::json& config, const std::string& origin);

 private:
  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;
  void reset_history() override { derivatives_.clear(); }
  // Integral over [sigma[index], sigma[index + 1]] of the Lagrange basis polynomial of point
  // sigma[index - current] among the `order` points sigma[index], ..., sigma[index - order + 1].
  double lms_coefficient(int order, int index, int current) const;

  PredictionType prediction_;
  bool karras_;
  std::deque<HostTensor> derivatives_;  // oldest first, at most kOrder
};

}  // namespace websd::schedulers
