#include "models/graphs/sd_blocks.h"

#include "models/graphs/layers.h"

namespace websd::blocks {
namespace {

// diffusers' Transformer2DModel builds its GroupNorm with eps 1e-6 whatever the UNet's norm_eps.
constexpr double kTransformerGroupNormEps = 1e-6;
// BasicTransformerBlock's LayerNorms: Transformer2DModel's default norm_eps, which the UNet keeps.
constexpr double kTransformerLayerNormEps = 1e-5;
// FeedForward's inner width is 4x the model width (mult=4).
constexpr std::int64_t kFeedForwardMultiplier = 4;

// diffusers' Attention as BasicTransformerBlock uses it: bias-free to_q/to_k/to_v, to_out.0 with bias.
// Self-attention when `context` is x itself.
ValueId attention(FunctionBuilder& b, const std::string& name, ValueId x, ValueId context, std::int64_t heads) {
  const auto scope = b.scope(name);
  const std::int64_t width = b.shape(x).back();
  const ValueId q = layers::linear(b, "to_q", x, width, false);
  const ValueId k = layers::linear(b, "to_k", context, width, false);
  const ValueId v = layers::linear(b, "to_v", context, width, false);
  return layers::linear(b, "to_out.0", layers::multi_head_attention(b, q, k, v, heads, false), width);
}

// FeedForward with GEGLU: proj to 2 x inner, hidden * gelu(gate), then back to the model width.
ValueId feed_forward(FunctionBuilder& b, const std::string& name, ValueId x) {
  const auto scope = b.scope(name);
  const std::int64_t width = b.shape(x).back();
  const ValueId projected = layers::linear(b, "net.0.proj", x, 2 * kFeedForwardMultiplier * width);
  return layers::linear(b, "net.2", b.op("geglu", {projected}), width);
}

ValueId basic_transformer_block(FunctionBuilder& b, const std::string& name, ValueId x, ValueId context,
                                std::int64_t heads) {
  const auto scope = b.scope(name);
  ValueId normed = layers::layer_norm(b, "norm1", x, kTransformerLayerNormEps);
  x = b.add(attention(b, "attn1", normed, normed, heads), x);
  normed = layers::layer_norm(b, "norm2", x, kTransformerLayerNormEps);
  x = b.add(attention(b, "attn2", normed, context, heads), x);
  normed = layers::layer_norm(b, "norm3", x, kTransformerLayerNormEps);
  return b.add(feed_forward(b, "ff", normed), x);
}

}  // namespace

ValueId resnet_block(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t out_channels,
                     std::optional<ValueId> time_features, const NormSettings& norm) {
  const auto scope = b.scope(name);
  const std::int64_t in_channels = b.shape(x)[1];
  ValueId h = layers::silu(b, layers::group_norm(b, "norm1", x, norm.groups, norm.eps));
  h = layers::conv2d(b, "conv1", h, out_channels, 3, 1, 1);
  if (time_features) {
    const ValueId projected = layers::linear(b, "time_emb_proj", *time_features, out_channels);
    h = b.add(h, b.reshape(projected, {b.shape(projected)[0], out_channels, 1, 1}));
  }
  h = layers::silu(b, layers::group_norm(b, "norm2", h, norm.groups, norm.eps));
  h = layers::conv2d(b, "conv2", h, out_channels, 3, 1, 1);
  const ValueId shortcut = in_channels == out_channels ? x : layers::conv2d(b, "conv_shortcut", x, out_channels, 1);
  return b.add(shortcut, h);
}

ValueId spatial_transformer(FunctionBuilder& b, const std::string& name, ValueId x, ValueId context,
                            const TransformerSettings& settings) {
  const auto scope = b.scope(name);
  const Shape shape = b.shape(x);
  const std::int64_t channels = shape[1], height = shape[2], width = shape[3];
  const ValueId normed = layers::group_norm(b, "norm", x, settings.groups, kTransformerGroupNormEps);
  // diffusers projects before flattening with a 1x1 conv and after flattening with a Linear.
  ValueId tokens = settings.linear_projection
                       ? layers::linear(b, "proj_in", layers::pixels_to_tokens(b, normed), channels)
                       : layers::pixels_to_tokens(b, layers::conv2d(b, "proj_in", normed, channels, 1));
  for (std::int64_t layer = 0; layer < settings.layers; ++layer) {
    tokens = basic_transformer_block(b, "transformer_blocks." + std::to_string(layer), tokens, context, settings.heads);
  }
  const ValueId out =
      settings.linear_projection
          ? layers::tokens_to_pixels(b, layers::linear(b, "proj_out", tokens, channels), height, width)
          : layers::conv2d(b, "proj_out", layers::tokens_to_pixels(b, tokens, height, width), channels, 1);
  return b.add(out, x);
}

ValueId downsample(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t padding) {
  const std::int64_t channels = b.shape(x)[1];
  if (padding == 0) x = b.op("pad", {x}, {{"pads", std::vector<std::int64_t>{0, 0, 0, 0, 0, 1, 0, 1}}});
  return layers::conv2d(b, name + ".conv", x, channels, 3, 2, padding);
}

ValueId upsample(FunctionBuilder& b, const std::string& name, ValueId x) {
  const std::int64_t channels = b.shape(x)[1];
  const ValueId doubled = b.op("upsample_nearest", {x}, {{"scale", std::int64_t{2}}});
  return layers::conv2d(b, name + ".conv", doubled, channels, 3, 1, 1);
}

ValueId spatial_self_attention(FunctionBuilder& b, const std::string& name, ValueId x, const NormSettings& norm) {
  const auto scope = b.scope(name);
  const Shape shape = b.shape(x);
  const std::int64_t channels = shape[1];
  const ValueId tokens = layers::pixels_to_tokens(b, layers::group_norm(b, "group_norm", x, norm.groups, norm.eps));
  const ValueId q = layers::linear(b, "to_q", tokens, channels);
  const ValueId k = layers::linear(b, "to_k", tokens, channels);
  const ValueId v = layers::linear(b, "to_v", tokens, channels);
  const ValueId attended = layers::linear(b, "to_out.0", layers::multi_head_attention(b, q, k, v, 1, false), channels);
  return b.add(layers::tokens_to_pixels(b, attended, shape[2], shape[3]), x);
}

}  // namespace websd::blocks
