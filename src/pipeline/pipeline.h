// Stable Diffusion txt2img and img2img on any DiffusionBackend (diffusers' StableDiffusionPipeline
// and StableDiffusionImg2ImgPipeline): prompt encoding with classifier-free guidance, seeded or given
// starting latents, the scheduler's denoising loop, and VAE decoding to 8-bit RGB.
//
//   Pipeline pipeline(backend, tokenizer);
//   pipeline.generate(request, *scheduler, [](const GeneratedImage& image) { /* e.g. png_write_rgb */ }, progress);
//
// Random draws of image i come from TorchGenerator(seed + i) in diffusers' order (txt2img.h,
// img2img.h). Ownership: borrows the backend and the tokenizer, which must outlive it. Not thread-safe:
// one generate() at a time (the backend is single-threaded).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/host_tensor.h"
#include "core/rgb_image.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/generation_params.h"
#include "pipeline/progress.h"
#include "pipeline/schedulers/scheduler.h"
#include "pipeline/tokenizer/clip_tokenizer.h"

namespace websd {

struct GeneratedImage {
  int index = 0;           // in the run
  std::uint64_t seed = 0;  // of this image's generator
  HostTensor latents;      // after the last step, before 1 / scaling_factor: [1, C, h, w]
  HostTensor rgba;         // the decoded image, 255 * clamp(x / 2 + 0.5, 0, 1) unrounded: [H, W, 4]
  RgbImage image;          // rgba rounded to bytes (ties to even), alpha dropped
  std::string parameters;  // A1111 "parameters" text for the PNG
};

// resolve_request, then the steps and the img2img strength checked against `scheduler` (which this
// leaves with its timesteps set). Throws websd::Error naming the bad value; touches no model.
GenerationRequest validate_request(const GenerationRequest& request, const ModelInfo& info,
                                   schedulers::Scheduler& scheduler);

using ImageCallback = std::function<void(const GeneratedImage&)>;

class Pipeline {
 public:
  Pipeline(DiffusionBackend& backend, const ClipTokenizer& tokenizer);

  // Validates the request (validate_request), then makes its batch_count images one after another,
  // handing each to `on_image` as soon as it is decoded. Restarts `scheduler` for every image.
  // Throws websd::Error for a bad request before any backend call. The synchronous convenience over
  // GenerationSession (generation_session.h), which callers that must yield between steps drive.
  void generate(const GenerationRequest& request, schedulers::Scheduler& scheduler, const ImageCallback& on_image,
                const ProgressCallback& progress = {});

 private:
  DiffusionBackend& backend_;
  const ClipTokenizer& tokenizer_;
};

}  // namespace websd
