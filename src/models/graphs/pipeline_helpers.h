// Functions of the txt2img pipeline that a target runs on its device beside the networks, so that a
// denoising step and the final image need no host round trip of the guidance batch or the decoded
// image. Built from the networks' single definitions (sd_graphs.h). Pure functions.
#pragma once

#include <cstdint>

#include "core/host_tensor.h"
#include "graph/function.h"
#include "models/unet_config.h"

namespace websd {

// Symbol "unet_cfg": one UNet step with classifier-free guidance, as diffusers applies it. Inputs
// "sample" f32[1, in_channels, h, w], "timestep" f32[1], "encoder_hidden_states"
// f32[2, tokens, cross_attention_dim] (rows: negative prompt, prompt) and "guidance_scale" f32[1];
// output uncond + guidance_scale * (cond - uncond) f32[1, out_channels, h, w], where (uncond, cond)
// is the UNet's prediction for the batch (sample, sample). Throws websd::Error like unet_graph.
graph::Function unet_cfg_graph(const UNetConfig& config, std::int64_t latent_h, std::int64_t latent_w,
                               std::int64_t tokens = 77);

// Symbol "image_to_rgba": input "image" f32[1, 3, height, width], a decoded image in about [-1, 1];
// output f32[height, width, 4] = 255 * clamp(image / 2 + 0.5, 0, 1) per RGB channel and 255 as
// alpha: byte-range values, rounded to bytes (round to nearest) by whoever stores them.
graph::Function image_to_rgba_graph(std::int64_t height, std::int64_t width);

}  // namespace websd
