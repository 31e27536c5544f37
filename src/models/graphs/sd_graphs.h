// The three Stable Diffusion networks as graph functions, built from their typed configs. These are
// the only definitions of the networks: every target compiles or runs these functions. Shapes are
// static, so a function is built per batch size and latent size. Weight names are the canonical
// checkpoint keys of src/import (CLIP keys carry the "text_model." prefix). Pure functions.
#pragma once

#include <cstdint>

#include "graph/function.h"
#include "models/clip_config.h"
#include "models/unet_config.h"
#include "models/vae_config.h"

namespace websd {

// Symbol "clip". Input "input_ids" i64[batch, tokens]; output last_hidden_state f32[batch, tokens, hidden].
graph::Function clip_text_graph(const ClipTextConfig& config, std::int64_t batch, std::int64_t tokens = 77);

// Symbol "unet". Inputs "sample" f32[batch, in_channels, h, w], "timestep" f32[batch],
// "encoder_hidden_states" f32[batch, tokens, cross_attention_dim]; output the model prediction
// f32[batch, out_channels, h, w]. h and w must be divisible by 2^(blocks-1) (else websd::Error).
graph::Function unet_graph(const UNetConfig& config, std::int64_t batch, std::int64_t latent_h, std::int64_t latent_w,
                           std::int64_t tokens = 77);

// Symbol "vae_decode". Input "latents" f32[batch, latent_channels, h, w] (already divided by the
// scaling factor); output the image f32[batch, out_channels, s*h, s*w] in about [-1, 1], where
// s = 2^(blocks-1) (8 for SD).
graph::Function vae_decode_graph(const VaeConfig& config, std::int64_t batch, std::int64_t latent_h,
                                 std::int64_t latent_w);

// Symbol "vae_encode". Input "image" f32[batch, in_channels, H, W] in [-1, 1]; outputs the latent
// distribution's "mean" and "logvar" (clamped to [-30, 20]), each f32[batch, latent_channels, H/s, W/s]
// with s as above. H and W must be divisible by s (else websd::Error).
graph::Function vae_encode_graph(const VaeConfig& config, std::int64_t batch, std::int64_t height, std::int64_t width);

}  // namespace websd
