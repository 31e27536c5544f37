// The clean latents a denoising step's model output predicts (x0), for live previews while an
// image is made: early samples are mostly noise, their x0 already shows the picture. An
// approximation for any scheduler, read from its public schedule: sigma-space classes (init noise
// sigma above 1: x = x0 + sigma * noise) use the step's sigma; variance-preserving ones
// (x = sqrt(alpha_cumprod) * x0 + sqrt(1 - alpha_cumprod) * noise) the timestep's alpha_cumprod.
// The prediction type is the scheduler's. Pure; thread-safe.
#pragma once

#include "core/host_tensor.h"
#include "pipeline/schedulers/scheduler.h"

namespace websd {

// `prediction` is the (guided) model output at schedule position `position` of `scheduler`'s
// timesteps(), `sample` the sample it was computed from (before the scheduler's step).
HostTensor denoised_preview(const schedulers::Scheduler& scheduler, std::size_t position, const HostTensor& prediction,
                            const HostTensor& sample);

}  // namespace websd
