// UniPC (Zhao et al. 2023), diffusers' UniPCMultistepScheduler: a multistep predictor (UniP) whose
// result is refined by a corrector (UniC) once the model has been evaluated at it, B(h) variants
// bh1/bh2, data or noise prediction (predict_x0). Keeps the run's converted outputs and the sample
// before the last predictor. Not thread-safe (see Scheduler).
#pragma once

#include <vector>

#include "pipeline/schedulers/multistep_scheduler.h"

namespace websd::schedulers {

class UniPcScheduler final : public MultistepScheduler {
 public:
  static constexpr const char* kClassName = "UniPCMultistepScheduler";
  static std::vector<ConfigKey> config_keys();

  UniPcScheduler(const nlohmann::json& config, const std::string& origin);

 private:
  // The coefficients both updates share at one step of log-SNR width h.
  struct UpdateTerms {
    float h_phi_1;               // expm1(hh), hh = -h for data prediction and h for noise prediction
    float b_h;                   // B(h): hh (bh1) or expm1(hh) (bh2)
    std::vector<float> ratios;   // r_k, then 1
    std::vector<float> targets;  // b_i = h_phi_k(i) * i! / B(h)
  };

  void build_schedule(int count) override;
  HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                         TorchGenerator* generator) override;
  void reset_history() override;

  UpdateTerms update_terms(float h, std::vector<float> ratios, int order) const;
  HostTensor predictor(const HostTensor& sample, int index, int order) const;
  // UniC: rebuilds the sample at `index` from the one before the last predictor, now that the model
  // has been evaluated at the predicted sample (`converted` is that evaluation).
  HostTensor corrector(const HostTensor& converted, const HostTensor& last_sample, int index, int order) const;

  bool predict_x0_;
  bool bh1_;
  bool karras_;
  bool final_sigma_min_;
  std::optional<double> sigma_min_;
  std::optional<double> sigma_max_;
  std::vector<int> disable_corrector_;

  // The run's state besides the converted outputs.
  HostTensor last_sample_;  // empty until the first predictor
  int this_order_ = 1;
};

}  // namespace websd::schedulers
