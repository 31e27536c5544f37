// What a user asks of one generation run, its validation against the model, and the A1111-style
// "parameters" text stored in each PNG so that an image says how to make it again.
//
// Batch count: image i of a run uses seed + i with a fresh generator, as AUTOMATIC1111 does, so every
// image is reproduced alone by the seed written into its own PNG. (diffusers' num_images_per_prompt
// draws all images from one stream instead, so an image there depends on how many were made with it.)
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/host_tensor.h"
#include "core/rgb_image.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/vae_decode_plan.h"

namespace websd {

struct GenerationParams {
  std::string prompt;
  std::string negative_prompt;  // empty: the unconditional prompt "" (diffusers' default)
  int steps = 20;
  double guidance_scale = 7.5;  // <= 1 runs the conditional half only, as diffusers does
  std::uint64_t seed = 0;
  std::int64_t width = 0;   // 0: from the init image, the init latents, or the model's default size
  std::int64_t height = 0;  // (see resolve_image_size)
  int batch_count = 1;      // images in the run; image i uses seed + i
  double strength = 0.8;    // img2img only: the share of the schedule that is run, in (0, 1]
};

// The inputs of one run: parameters plus the optional starting points.
struct GenerationRequest {
  GenerationParams params;
  std::optional<RgbImage> init_image;  // img2img when set
  // txt2img from given unscaled standard-normal latents [batch_count, C, h, w] instead of seeded ones.
  std::optional<HostTensor> init_latents;
  // Whether the VAE decodes the image whole or in tiles (vae_decode_plan.h).
  VaeTiling vae_tiling;
};

// Largest image side accepted. Larger sides exceed this machine class by far (a 4096x4096 VAE decode
// alone holds 8 GiB per activation), and oneDNN cannot describe some of their shapes.
inline constexpr std::int64_t kMaxImageSide = 4096;

// Throws websd::Error(component, ...) unless both sides are positive multiples of
// vae_scale_factor x latent_size_multiple and at most kMaxImageSide; names the nearest valid side.
void check_image_size(const std::string& component, std::int64_t width, std::int64_t height, const ModelInfo& info);

// Largest batch count accepted; more is almost surely a typo.
inline constexpr int kMaxBatchCount = 10000;

// Fills params.width/height when 0 (init image size, else init latents size x vae_scale_factor, else
// sample_height/sample_width x vae_scale_factor) and checks the whole request: steps >= 1, a finite guidance
// scale, sides that are positive multiples of vae_scale_factor x latent_size_multiple, an init image of
// exactly that size, init latents of shape [batch_count, C, h, w], strength in (0, 1],
// 1 <= batch_count <= kMaxBatchCount, init latents not combined with an init image, and a VAE tile
// size that check_vae_tiling accepts.
// Throws one websd::Error naming the bad value and how to fix it.
GenerationRequest resolve_request(GenerationRequest request, const ModelInfo& info);

// The A1111 "parameters" text of image `index` of a run:
//   <prompt>
//   Negative prompt: <negative prompt>
//   Steps: 20, Sampler: Euler a, CFG scale: 7.5, Seed: 42, Size: 512x512, Model: sd15[, Denoising strength: 0.75]
// with the prompts and the model's name escaped (parameters_escape.h): valid UTF-8, no control
// characters, and no line or field but these.
std::string generation_parameters_text(const GenerationParams& params, int index, const std::string& sampler,
                                       const std::string& model, bool img2img);

}  // namespace websd
