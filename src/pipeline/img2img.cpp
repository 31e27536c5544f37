#include "pipeline/img2img.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "pipeline/finite_check.h"

namespace websd {

LatentDistribution latent_distribution(HostTensor mean, HostTensor logvar, const ModelInfo& info, std::int64_t height,
                                       std::int64_t width) {
  require_finite(mean, "the VAE encoder's latent mean", kCheckWeightsHint);
  require_finite(logvar, "the VAE encoder's latent log-variance", kCheckWeightsHint);
  const Shape expected = {1, info.latent_channels, height / info.vae_scale_factor, width / info.vae_scale_factor};
  if (mean.shape != expected || logvar.shape != expected || mean.numel() != shape_numel(expected) ||
      logvar.numel() != shape_numel(expected)) {
    throw Error("pipeline", "VAE encoder returned mean " + shape_to_string(mean.shape) + " and logvar " +
                                shape_to_string(logvar.shape) + ", expected " + shape_to_string(expected));
  }
  // diffusers' DiagonalGaussianDistribution clamps; doing it here keeps every backend's output equivalent.
  for (float& value : logvar.data) value = std::clamp(value, -30.0f, 20.0f);
  return {std::move(mean), std::move(logvar)};
}

Img2ImgStart img2img_start(const LatentDistribution& distribution, double scaling_factor, double strength,
                           schedulers::Scheduler& scheduler, TorchGenerator& generator) {
  const HostTensor sample_noise = generator.randn(distribution.mean.shape);
  const auto scale = static_cast<float>(scaling_factor);
  HostTensor latents(distribution.mean.shape);
  for (std::size_t i = 0; i < latents.data.size(); ++i) {
    const float deviation = std::exp(0.5f * distribution.logvar.data[i]);
    latents.data[i] = scale * (distribution.mean.data[i] + deviation * sample_noise.data[i]);
  }
  Img2ImgStart start;
  start.timesteps = scheduler.start_at_strength(strength);
  const HostTensor noise = generator.randn(latents.shape);
  start.latents = scheduler.add_noise(latents, noise, start.timesteps.front());
  return start;
}

}  // namespace websd
