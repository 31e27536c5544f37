// The diffusers building blocks shared by the UNet and the VAE (ResnetBlock2D, Transformer2DModel with
// its BasicTransformerBlocks, Downsample2D, Upsample2D, the VAE's spatial self-attention), as graph
// ops named like the checkpoint's modules: `name` is the module's key prefix ("down_blocks.0.resnets.1").
// Internal to websd_model_graphs. Not thread-safe (mutates the builder).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "graph/function_builder.h"

namespace websd::blocks {

using graph::FunctionBuilder;
using graph::ValueId;

struct NormSettings {
  std::int64_t groups = 32;
  double eps = 1e-5;
};

// ResnetBlock2D (output_scale_factor 1, no dropout at inference). `time_features` is silu(temb)
// [B, T], projected by time_emb_proj and added after conv1; nullopt for the VAE's blocks, which have
// no time embedding. A 1x1 conv_shortcut maps the input when the channel count changes.
ValueId resnet_block(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t out_channels,
                     std::optional<ValueId> time_features, const NormSettings& norm);

struct TransformerSettings {
  std::int64_t heads = 8;
  std::int64_t layers = 1;  // BasicTransformerBlocks
  std::int64_t groups = 32;
  bool linear_projection = false;  // proj_in/proj_out as Linear instead of 1x1 Conv2d
};

// Transformer2DModel on continuous input: GroupNorm(eps 1e-6), proj_in, BasicTransformerBlocks
// (self-attention, cross-attention to `context` [B, tokens, cross_dim], GEGLU feed-forward), proj_out,
// plus the input as residual.
ValueId spatial_transformer(FunctionBuilder& b, const std::string& name, ValueId x, ValueId context,
                            const TransformerSettings& settings);

// Downsample2D with a conv: stride 2, `padding` on every side; padding 0 means diffusers' asymmetric
// zero pad of one pixel on the right and bottom first (the VAE encoder).
ValueId downsample(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t padding);
// Upsample2D with a conv: nearest-neighbour x2, then a 3x3 conv.
ValueId upsample(FunctionBuilder& b, const std::string& name, ValueId x);

// The VAE mid block's Attention: GroupNorm, one head over the H*W pixels with to_q/to_k/to_v/to_out.0,
// plus the input as residual (rescale_output_factor 1).
ValueId spatial_self_attention(FunctionBuilder& b, const std::string& name, ValueId x, const NormSettings& norm);

}  // namespace websd::blocks
