// One step of the denoising loop shared by txt2img and img2img (diffusers' StableDiffusionPipeline.__call__):
//   x = scheduler.step(guided_prediction(scale_model_input(x, t), t), t, x, generator)
// Stochastic schedulers draw their per-step noise from `generator`, after whatever the caller drew.
// Stateless; the backend and scheduler are used from the calling thread only.
#pragma once

#include <vector>

#include "core/host_tensor.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/scheduler.h"

namespace websd {

// Runs step `index` of `timesteps` (all of scheduler.timesteps(), or img2img's tail) on `latents`
// [1, C, h, w] and returns the latents after it. Throws websd::Error when the prediction is not finite.
HostTensor denoise_step(DiffusionBackend& backend, schedulers::Scheduler& scheduler,
                        const std::vector<double>& timesteps, std::size_t index, const HostTensor& latents,
                        const HostTensor& context, double guidance_scale, TorchGenerator& generator);

}  // namespace websd
