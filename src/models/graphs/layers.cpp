#include "models/graphs/layers.h"

#include <cmath>

namespace websd::layers {

ValueId linear(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t out_features, bool bias) {
  const auto scope = b.scope(name);
  const std::int64_t in_features = b.shape(x).back();
  std::vector<ValueId> operands{x, b.weight("weight", {out_features, in_features})};
  if (bias) operands.push_back(b.weight("bias", {out_features}));
  return b.op("linear", operands);
}

ValueId conv2d(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t out_channels, std::int64_t kernel,
               std::int64_t stride, std::int64_t padding) {
  const auto scope = b.scope(name);
  const std::int64_t in_channels = b.shape(x)[1];
  const ValueId weight = b.weight("weight", {out_channels, in_channels, kernel, kernel});
  const ValueId bias = b.weight("bias", {out_channels});
  return b.op("conv2d", {x, weight, bias}, {{"stride", stride}, {"padding", padding}});
}

ValueId group_norm(FunctionBuilder& b, const std::string& name, ValueId x, std::int64_t groups, double eps) {
  const auto scope = b.scope(name);
  const std::int64_t channels = b.shape(x)[1];
  return b.op("group_norm", {x, b.weight("weight", {channels}), b.weight("bias", {channels})},
              {{"groups", groups}, {"eps", eps}});
}

ValueId layer_norm(FunctionBuilder& b, const std::string& name, ValueId x, double eps) {
  const auto scope = b.scope(name);
  const std::int64_t width = b.shape(x).back();
  return b.op("layer_norm", {x, b.weight("weight", {width}), b.weight("bias", {width})}, {{"eps", eps}});
}

ValueId silu(FunctionBuilder& b, ValueId x) { return b.op("silu", {x}); }

namespace {

// [B, S, H*D] -> [B, H, S, D]
ValueId split_heads(FunctionBuilder& b, ValueId x, std::int64_t heads) {
  const Shape shape = b.shape(x);
  return b.permute(b.reshape(x, {shape[0], shape[1], heads, shape[2] / heads}), {0, 2, 1, 3});
}

// [B, H, S, D] -> [B, S, H*D]
ValueId merge_heads(FunctionBuilder& b, ValueId x) {
  const Shape shape = b.shape(x);
  const Shape merged{shape[0], shape[2], shape[1] * shape[3]};
  return b.reshape(b.permute(x, {0, 2, 1, 3}), merged);
}

}  // namespace

ValueId multi_head_attention(FunctionBuilder& b, ValueId q, ValueId k, ValueId v, std::int64_t heads, bool causal) {
  const std::int64_t head_dim = b.shape(q).back() / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  const ValueId out = b.op("attention", {split_heads(b, q, heads), split_heads(b, k, heads), split_heads(b, v, heads)},
                           {{"scale", scale}, {"causal", std::int64_t{causal ? 1 : 0}}});
  return merge_heads(b, out);
}

ValueId pixels_to_tokens(FunctionBuilder& b, ValueId x) {
  const Shape shape = b.shape(x);
  return b.permute(b.reshape(x, {shape[0], shape[1], shape[2] * shape[3]}), {0, 2, 1});
}

ValueId tokens_to_pixels(FunctionBuilder& b, ValueId tokens, std::int64_t height, std::int64_t width) {
  const Shape shape = b.shape(tokens);
  return b.reshape(b.permute(tokens, {0, 2, 1}), {shape[0], shape[2], height, width});
}

}  // namespace websd::layers
