#include "pipeline/generation_params.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "pipeline/finite_check.h"
#include "pipeline/parameters_escape.h"
#include "pipeline/tokenizer/utf8_text.h"

namespace websd {
namespace {

// Shortest natural spelling: 7.5 -> "7.5", 7 -> "7".
std::string format_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

std::string size_text(std::int64_t width, std::int64_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

void check_side(const std::string& component, const char* option, std::int64_t value, const ModelInfo& info) {
  if (value > kMaxImageSide) {
    throw Error(component, std::string(option) + " " + std::to_string(value) + " exceeds websd's maximum side of " +
                               std::to_string(kMaxImageSide) + " pixels");
  }
  const std::int64_t multiple = info.vae_scale_factor * info.latent_size_multiple;
  if (value <= 0 || value % multiple != 0) {
    const std::int64_t nearest = std::max<std::int64_t>(multiple, (value + multiple / 2) / multiple * multiple);
    throw Error(component, std::string(option) + " " + std::to_string(value) + " is not a positive multiple of " +
                               std::to_string(multiple) + " (the VAE maps " + std::to_string(info.vae_scale_factor) +
                               " pixels to one latent and the UNet needs latent sides in multiples of " +
                               std::to_string(info.latent_size_multiple) + "; try " + std::to_string(nearest) + ")");
  }
}

// Fills a zero width/height from the init image, the init latents or the model, in that order.
void resolve_size(GenerationRequest& request, const ModelInfo& info) {
  GenerationParams& params = request.params;
  std::int64_t width = info.sample_width * info.vae_scale_factor;
  std::int64_t height = info.sample_height * info.vae_scale_factor;
  if (request.init_image) {
    width = request.init_image->width;
    height = request.init_image->height;
  } else if (request.init_latents && request.init_latents->shape.size() == 4) {
    width = request.init_latents->shape[3] * info.vae_scale_factor;
    height = request.init_latents->shape[2] * info.vae_scale_factor;
  }
  if (params.width == 0) params.width = width;
  if (params.height == 0) params.height = height;
}

void check_init_image(const GenerationRequest& request) {
  const GenerationParams& params = request.params;
  const RgbImage& image = *request.init_image;
  if (image.width != params.width || image.height != params.height) {
    throw Error("pipeline", "init image is " + size_text(image.width, image.height) + " but the requested size is " +
                                size_text(params.width, params.height) +
                                " (resize the image, or leave out --width/--height to use its size)");
  }
  if (!(params.strength > 0.0 && params.strength <= 1.0)) {
    throw Error("pipeline", "strength " + format_number(params.strength) +
                                " is outside (0, 1] (1 repaints fully, small values stay close to the init image)");
  }
}

void check_init_latents(const GenerationRequest& request, const ModelInfo& info) {
  require_finite(*request.init_latents, "the init latents",
                 "give finite standard-normal latents, as `websd noise` or --save-latents write them");
  const GenerationParams& params = request.params;
  const Shape expected = {params.batch_count, info.latent_channels, params.height / info.vae_scale_factor,
                          params.width / info.vae_scale_factor};
  if (request.init_latents->shape != expected) {
    throw Error("pipeline", "init latents have shape " + shape_to_string(request.init_latents->shape) + ", expected " +
                                shape_to_string(expected) + " for " + std::to_string(params.batch_count) +
                                " image(s) of " + size_text(params.width, params.height) +
                                " (one row of [channels, height/" + std::to_string(info.vae_scale_factor) + ", width/" +
                                std::to_string(info.vae_scale_factor) + "] per image)");
  }
}

}  // namespace

void check_image_size(const std::string& component, std::int64_t width, std::int64_t height, const ModelInfo& info) {
  check_side(component, "width", width, info);
  check_side(component, "height", height, info);
}

GenerationRequest resolve_request(GenerationRequest request, const ModelInfo& info) {
  GenerationParams& params = request.params;
  if (params.steps < 1) {
    throw Error("pipeline", "steps " + std::to_string(params.steps) + " must be at least 1 (20-50 is usual)");
  }
  if (!std::isfinite(params.guidance_scale)) {
    throw Error("pipeline",
                "guidance scale " + format_number(params.guidance_scale) + " is not a finite number (7.5 is usual)");
  }
  if (params.batch_count < 1 || params.batch_count > kMaxBatchCount) {
    throw Error("pipeline", "batch count " + std::to_string(params.batch_count) + " is outside 1.." +
                                std::to_string(kMaxBatchCount));
  }
  if (request.init_image && request.init_latents) {
    throw Error("pipeline",
                "init latents and an init image were both given (init latents start txt2img; an init image "
                "starts img2img: pass one of them)");
  }
  for (const auto& [what, text] : {std::pair{"prompt", &params.prompt}, {"negative prompt", &params.negative_prompt}}) {
    if (utf8_replace_invalid(*text) != *text) {
      throw Error("pipeline", std::string(what) +
                                  " is not valid UTF-8 (websd reads prompts as UTF-8 text, and writes "
                                  "them into the PNG, whose text must be UTF-8)");
    }
  }
  resolve_size(request, info);
  check_image_size("pipeline", params.width, params.height, info);
  if (request.init_image) check_init_image(request);
  if (request.init_latents) check_init_latents(request, info);
  check_vae_tiling(request.vae_tiling, info);
  return request;
}

std::string generation_parameters_text(const GenerationParams& params, int index, const std::string& sampler,
                                       const std::string& model, bool img2img) {
  std::string text = parameters_prompt(params.prompt, true) + "\n";
  if (!params.negative_prompt.empty()) {
    text += "Negative prompt: " + parameters_prompt(params.negative_prompt, false) + "\n";
  }
  text += "Steps: " + std::to_string(params.steps) + ", Sampler: " + parameters_field_value(sampler) +
          ", CFG scale: " + format_number(params.guidance_scale) +
          ", Seed: " + std::to_string(params.seed + static_cast<std::uint64_t>(index)) +
          ", Size: " + size_text(params.width, params.height) + ", Model: " + parameters_field_value(model);
  if (img2img) text += ", Denoising strength: " + format_number(params.strength);
  return text;
}

}  // namespace websd
