// Base of the exponential-integrator multistep solvers (DPM-Solver++, UniPC): integer timesteps,
// variance-preserving samples x = alpha * x0 + sigma * noise with alpha, sigma taken from a float32
// sigma schedule, and a history of converted model outputs (x0 or noise predictions) that the
// higher-order updates combine. Not thread-safe (see Scheduler).
#pragma once

#include <optional>
#include <vector>

#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/sample_math.h"
#include "pipeline/schedulers/scheduler.h"
#include "pipeline/schedulers/sigma_math.h"
#include "pipeline/schedulers/timestep_spacing.h"

namespace websd::schedulers {

class MultistepScheduler : public Scheduler {
 public:
  HostTensor add_noise(const HostTensor& original, const HostTensor& noise, double timestep) const override;

 protected:
  struct SigmaPlan {
    int last_timestep = 0;  // spacing bound (T unless lambda_min_clipped cuts the schedule)
    bool karras = false;
    std::optional<double> sigma_min;  // Karras bounds from the config, else the training sigmas' ends
    std::optional<double> sigma_max;
    bool round_karras_timesteps = true;
    bool final_sigma_min = false;             // end at a nonzero sigma instead of 0
    bool final_is_last_karras_sigma = false;  // that sigma is the last Karras one (UniPC), else the
                                              // smallest training sigma
  };

  MultistepScheduler(SchedulerConfig config, ZeroSnr zero_snr, bool sample_prediction_supported);

  // Fills timesteps_, sigmas_ and num_inference_steps_ as the classes' set_timesteps do.
  void build_multistep_schedule(int count, const SigmaPlan& plan);
  // diffusers' multistep index_for_timestep: an unknown timestep maps to the last step.
  int index_for_timestep(double timestep) const override;

  VpCoefficients vp_at(int index) const { return vp_coefficients(static_cast<float>(sigmas_[index])); }
  // The model output as a data (x0) prediction, thresholded if configured, or as a noise prediction.
  HostTensor to_data_prediction(const HostTensor& model_output, const HostTensor& sample, int index) const;
  HostTensor to_noise_prediction(const HostTensor& model_output, const HostTensor& sample, int index) const;
  // Shifts `converted` into the history of the last solver_order converted outputs.
  void remember_output(HostTensor converted);
  // The output `back` steps ago (0 = the latest).
  const HostTensor& output_back(int back) const {
    return model_outputs_[model_outputs_.size() - 1 - static_cast<std::size_t>(back)];
  }
  void reset_history() override;

  PredictionType prediction_;
  X0Limit x0_limit_;
  TimestepSpacing spacing_;
  int steps_offset_;
  int solver_order_;
  bool lower_order_final_;
  int lower_order_nums_ = 0;

 private:
  std::vector<HostTensor> model_outputs_;  // oldest first
};

}  // namespace websd::schedulers
