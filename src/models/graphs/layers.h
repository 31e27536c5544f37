// The PyTorch layers that the SD networks are made of (nn.Linear, nn.Conv2d, the norms, multi-head
// attention), written as graph ops whose weights carry the checkpoint's names. Each function appends
// nodes to the builder it is given, creating the weights "<name>.weight" / "<name>.bias" under the
// builder's current scope; input widths come from the input's static shape. Internal to
// websd_model_graphs. Not thread-safe (mutates the builder).
#pragma once

#include <cstdint>
#include <string>

#include "graph/function_builder.h"

namespace websd::layers {

using graph::FunctionBuilder;
using graph::ValueId;

// nn.Linear over the last axis: weight [out, in], optional bias [out].
ValueId linear(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t out_features, bool bias = true);
// nn.Conv2d with a square kernel and a bias: weight [out, in, k, k].
ValueId conv2d(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t out_channels, std::int64_t kernel,
               std::int64_t stride = 1, std::int64_t padding = 0);
// nn.GroupNorm(groups, channels, eps) on NCHW.
ValueId group_norm(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t groups, double eps);
// nn.LayerNorm over the last axis.
ValueId layer_norm(FunctionBuilder& b, const std::string& name, ValueId x, double eps);
ValueId silu(FunctionBuilder& b, ValueId x);

// Scaled dot-product attention of [B, S, heads*D] projections, heads split and merged with
// reshape + permute as diffusers' head_to_batch_dim does; scale D^-0.5. Returns [B, Sq, heads*Dv].
ValueId multi_head_attention(FunctionBuilder& b, ValueId q, ValueId k, ValueId v, std::int64_t heads, bool causal);

// [B, C, H, W] -> [B, H*W, C] (channels last) and back, for attention over pixels.
ValueId pixels_to_tokens(FunctionBuilder& b, ValueId x);
ValueId tokens_to_pixels(FunctionBuilder& b, ValueId tokens, std::int64_t height, std::int64_t width);

}  // namespace websd::layers
