// Base of the k-diffusion style schedulers (Euler, Euler ancestral, LMS, Heun), which work in sigma
// space: x = x0 + sigma * noise, the model sees x / sqrt(sigma^2 + 1), and the schedule is the
// training sigmas interpolated at (possibly fractional) float32 timesteps, or Karras sigmas mapped
// back to timesteps. Not thread-safe (see Scheduler).
#pragma once

#include <optional>

#include "pipeline/schedulers/scheduler.h"
#include "pipeline/schedulers/timestep_spacing.h"

namespace websd::schedulers {

class SigmaScheduler : public Scheduler {
 public:
  // sigma_max for "linspace"/"trailing" spacing, sqrt(sigma_max^2 + 1) for "leading".
  double init_noise_sigma() const override;
  HostTensor scale_model_input(const HostTensor& sample, double timestep) override;
  HostTensor add_noise(const HostTensor& original, const HostTensor& noise, double timestep) const override;

 protected:
  struct SigmaOptions {
    bool karras = false;
    std::optional<double> sigma_min;  // Karras bounds from the config (Euler), else the schedule's ends
    std::optional<double> sigma_max;
    bool final_sigma_min = false;  // end at the smallest training sigma instead of 0 (Euler)
  };

  SigmaScheduler(SchedulerConfig config, ZeroSnr zero_snr);

  // Fills timesteps_ (count float32 values) and sigmas_ (count + 1 float32 values) as diffusers'
  // Euler/LMS/Heun set_timesteps do before any class-specific rearrangement.
  void build_sigma_schedule(int count, const SigmaOptions& options);
  // Reads use_karras_sigmas and refuses the sigma variants websd leaves out.
  bool read_karras_flag() const;

  float sigma_at(int index) const { return static_cast<float>(sigmas_[static_cast<std::size_t>(index)]); }

  TimestepSpacing spacing_;
  int steps_offset_;
};

}  // namespace websd::schedulers
