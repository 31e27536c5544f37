// The starting point of a txt2img image (diffusers' StableDiffusionPipeline.prepare_latents): standard
// normal latents [1, C, h, w], drawn from the generator first of all draws or given by the user, then
// multiplied by the scheduler's init_noise_sigma. Stateless functions.
#pragma once

#include "core/host_tensor.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/scheduler.h"

namespace websd {

// Row `index` of [N, C, h, w] latents, as [1, C, h, w].
HostTensor latent_row(const HostTensor& latents, std::int64_t index);

// `noise` [1, C, h, w] (standard normal) scaled for the first step of `scheduler` (set_timesteps done).
HostTensor txt2img_start_latents(const HostTensor& noise, const schedulers::Scheduler& scheduler);

}  // namespace websd
