// Base of the schedulers that index alphas_cumprod by integer timestep (DDIM, DDPM, PNDM, LCM):
// their samples are x_t = sqrt(alphas_cumprod[t]) * x0 + sqrt(1 - alphas_cumprod[t]) * noise, the
// model input needs no scaling and init_noise_sigma is 1. Not thread-safe (see Scheduler).
#pragma once

#include "pipeline/schedulers/scheduler.h"

namespace websd::schedulers {

class AlphaScheduler : public Scheduler {
 public:
  // diffusers' DDPMScheduler.add_noise (shared by these classes).
  HostTensor add_noise(const HostTensor& original, const HostTensor& noise, double timestep) const override;
  // DDIM, DDPM and PNDM have no set_begin_index; LCM overrides.
  bool has_begin_index() const override { return false; }

 protected:
  using Scheduler::Scheduler;

  float alpha_cumprod_at(int timestep) const { return noise_.alphas_cumprod[static_cast<std::size_t>(timestep)]; }
};

}  // namespace websd::schedulers
