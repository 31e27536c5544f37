// The denoising loop shared by txt2img and img2img (diffusers' StableDiffusionPipeline.__call__):
//   for t in timesteps: x = scheduler.step(guided_prediction(scale_model_input(x, t), t), t, x, generator)
// Stochastic schedulers draw their per-step noise from `generator`, after whatever the caller drew.
// Stateless; the backend and scheduler are used from the calling thread only.
#pragma once

#include <functional>
#include <vector>

#include "core/host_tensor.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/scheduler.h"

namespace websd {

// Called after each step with (steps done, total steps).
using StepCallback = std::function<void(int done, int total)>;

// Runs `timesteps` (all of scheduler.timesteps(), or img2img's tail) from `latents` [1, C, h, w];
// returns the latents after the last step.
HostTensor denoise_latents(DiffusionBackend& backend, schedulers::Scheduler& scheduler,
                           const std::vector<double>& timesteps, HostTensor latents, const HostTensor& context,
                           double guidance_scale, TorchGenerator& generator, const StepCallback& on_step = {});

}  // namespace websd
