// What the pipeline needs from an engine that runs the networks: text encoding, one UNet
// evaluation, VAE decode and encode, all on host float32 tensors. The pipeline (tokenizer,
// schedulers, guidance, noise) depends only on this interface, never on the compiler: the CPU
// graph executor implements it today; compiled artifacts on CPU, CUDA and WebGPU implement it later.
// Implementations are used from one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host_tensor.h"

namespace websd {

struct ModelInfo {
  std::int64_t latent_channels = 4;
  std::int64_t vae_scale_factor = 8;    // image pixels per latent pixel
  double vae_scaling_factor = 0.18215;  // latents = encode(x) * this
  std::int64_t max_tokens = 77;
  // Latent height and width the UNet was trained at (its config's sample_size, an int or a pair); the
  // default image is (sample_height x vae_scale_factor) high and (sample_width x vae_scale_factor) wide.
  std::int64_t sample_height = 64;
  std::int64_t sample_width = 64;
  // Latent sides must be multiples of this (2^(levels - 1) for a UNet that halves the latents at each
  // level), so image sides must be multiples of vae_scale_factor * latent_size_multiple.
  std::int64_t latent_size_multiple = 1;
  std::string name;  // shown to users and written into PNG metadata
};

class DiffusionBackend {
 public:
  virtual ~DiffusionBackend() = default;

  virtual const ModelInfo& info() const = 0;
  // ids: [batch, 77] token ids -> [batch, 77, hidden].
  virtual HostTensor encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) = 0;
  // sample [batch, C, h, w], one timestep for all rows, context [batch, 77, hidden] -> prediction like sample.
  virtual HostTensor unet(const HostTensor& sample, double timestep, const HostTensor& context) = 0;
  // One step with classifier-free guidance: uncond + guidance_scale * (cond - uncond), where (uncond,
  // cond) is the UNet's prediction for the batch (sample, sample) with context rows (negative,
  // prompt); sample [1, C, h, w], context [2, 77, hidden] -> [1, C, h, w]. A backend with a compiled
  // `unet_cfg` function runs the whole step on its device; this default runs unet() on the batch and
  // combines on the host (pipeline/guidance.cpp), in the same float32 order.
  virtual HostTensor unet_guided(const HostTensor& sample, double timestep, const HostTensor& context,
                                 double guidance_scale);
  // latents [1, C, h, w] (already divided by the scaling factor) -> image [1, 3, 8h, 8w] in about [-1, 1].
  virtual HostTensor vae_decode(const HostTensor& latents) = 0;
  // image [1, 3, H, W] in [-1, 1] -> {mean, logvar} of the latent distribution.
  virtual std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) = 0;
};

}  // namespace websd
