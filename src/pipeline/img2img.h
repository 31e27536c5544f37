// The starting point of an img2img image (diffusers' StableDiffusionImg2ImgPipeline), with its random
// draws in diffusers' order on one generator:
//   1. the VAE encoder's latent distribution is sampled: mean + exp(logvar / 2) * randn, times the
//      VAE scaling factor;
//   2. the schedule keeps its last int(steps * strength) steps (Scheduler::start_at_strength);
//   3. noise = randn is mixed in by add_noise at the first kept timestep.
// A stochastic scheduler then draws its per-step noise from the same generator. Stateless functions.
#pragma once

#include <vector>

#include "core/host_tensor.h"
#include "core/rgb_image.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/scheduler.h"

namespace websd {

// What the VAE encoder says about an image: a diagonal Gaussian, logvar clamped to [-30, 20].
struct LatentDistribution {
  HostTensor mean;    // [1, C, h, w]
  HostTensor logvar;  // same shape
};

// The VAE encoder's output for the init image (x / 255 * 2 - 1, image_tensor.h), checked and with
// logvar clamped. Throws websd::Error if mean and logvar are not finite or not both
// [1, latent_channels, height / vae_scale_factor, width / vae_scale_factor].
LatentDistribution latent_distribution(HostTensor mean, HostTensor logvar, const ModelInfo& info, std::int64_t height,
                                       std::int64_t width);

struct Img2ImgStart {
  HostTensor latents;             // noised latents at timesteps.front()
  std::vector<double> timesteps;  // the kept tail of the schedule
};

// `scheduler` must have its timesteps set. Throws websd::Error (from the scheduler) when the strength
// keeps no step.
Img2ImgStart img2img_start(const LatentDistribution& distribution, double scaling_factor, double strength,
                           schedulers::Scheduler& scheduler, TorchGenerator& generator);

}  // namespace websd
