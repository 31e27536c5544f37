// Composite layers, each written once from primitive ops (their arity and inference are in
// ops/composite_ops.cpp). A target may run a composite with a fused kernel of its own; otherwise
// the lower_composites pass expands it with its decomposition here.
#include <cmath>
#include <map>

#include "graph/function_builder.h"
#include "graph/op_registry.h"

namespace websd::graph {
namespace {

// Normalises x over the axes given, then applies gamma/beta broadcast as `affine_shape`.
ValueId normalize(FunctionBuilder& b, ValueId x, std::vector<std::int64_t> axes, double eps) {
  const ValueId centered = b.sub(x, b.mean(x, axes));
  const ValueId variance = b.mean(b.mul(centered, centered), axes);
  return b.mul(centered, b.op("rsqrt", {b.add(variance, b.scalar(eps))}));
}

// [Sq, Skv] additive mask: 0 where key j <= query i (aligned at the end), -inf elsewhere.
ValueId causal_mask(FunctionBuilder& b, const Shape& scores_shape) {
  const std::int64_t q_len = scores_shape[2], kv_len = scores_shape[3];
  std::vector<double> mask(static_cast<std::size_t>(q_len * kv_len), 0.0);
  for (std::int64_t i = 0; i < q_len; ++i) {
    for (std::int64_t j = i + kv_len - q_len + 1; j < kv_len; ++j) mask[i * kv_len + j] = -INFINITY;
  }
  return b.op("constant", {}, {{"values", mask}, {"shape", Shape{q_len, kv_len}}});
}

std::vector<ValueId> layer_norm(FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
  const ValueId y = normalize(b, in[0], {-1}, attrs.get_float("eps", "layer_norm"));
  return {b.add(b.mul(y, in[1]), in[2])};
}

std::vector<ValueId> group_norm(FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
  const Shape shape = b.shape(in[0]);
  const auto groups = attrs.get_int("groups", "group_norm");
  const ValueId grouped = b.reshape(in[0], {shape[0], groups, -1});
  const ValueId y = b.reshape(normalize(b, grouped, {-1}, attrs.get_float("eps", "group_norm")), shape);
  const ValueId gamma = b.reshape(in[1], {1, shape[1], 1, 1});
  const ValueId beta = b.reshape(in[2], {1, shape[1], 1, 1});
  return {b.add(b.mul(y, gamma), beta)};
}

std::vector<ValueId> quick_gelu(FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs&) {
  return {b.mul(in[0], b.op("sigmoid", {b.mul(in[0], b.scalar(1.702))}))};
}

std::vector<ValueId> geglu(FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs&) {
  const std::int64_t width = b.shape(in[0]).back() / 2;
  const ValueId hidden = b.slice(in[0], -1, 0, width);
  const ValueId gate = b.slice(in[0], -1, width, 2 * width);
  return {b.mul(hidden, b.op("gelu", {gate}))};
}

std::vector<ValueId> linear(FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs&) {
  const ValueId y = b.matmul(in[0], in[1], true);
  return {in.size() == 3 ? b.add(y, in[2]) : y};
}

std::vector<ValueId> attention(FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
  ValueId scores = b.mul(b.matmul(in[0], in[1], true), b.scalar(attrs.get_float("scale", "attention")));
  if (attrs.get_int("causal", 0, "attention") != 0) scores = b.add(scores, causal_mask(b, b.shape(scores)));
  return {b.matmul(b.op("softmax", {scores}, {{"axis", std::int64_t{-1}}}), in[2])};
}

std::vector<ValueId> timestep_embedding(FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
  const auto dim = attrs.get_int("dim", "timestep_embedding");
  const auto shift = static_cast<float>(attrs.get_float("freq_shift", 1.0, "timestep_embedding"));
  const bool flip = attrs.get_int("flip_sin_to_cos", 1, "timestep_embedding") != 0;
  const std::int64_t half = dim / 2;
  // Frequencies in float32 arithmetic, as diffusers' get_timestep_embedding computes them.
  std::vector<double> frequencies(half);
  const float log_period = -std::log(10000.0f);
  for (std::int64_t i = 0; i < half; ++i) {
    const float exponent = log_period * static_cast<float>(i) / (static_cast<float>(half) - shift);
    frequencies[i] = std::exp(exponent);
  }
  const ValueId table = b.op("constant", {}, {{"values", frequencies}, {"shape", Shape{1, half}}});
  const ValueId angles = b.mul(b.reshape(in[0], {-1, 1}), table);
  const ValueId sin = b.op("sin", {angles}), cos = b.op("cos", {angles});
  return {flip ? b.concat({cos, sin}, -1) : b.concat({sin, cos}, -1)};
}

}  // namespace

const DecomposeFn* op_decomposition(const std::string& name) {
  static const std::map<std::string, DecomposeFn> decompositions = {
      {"layer_norm", layer_norm},
      {"group_norm", group_norm},
      {"quick_gelu", quick_gelu},
      {"geglu", geglu},
      {"linear", linear},
      {"attention", attention},
      {"timestep_embedding", timestep_embedding},
  };
  const auto found = decompositions.find(name);
  return found == decompositions.end() ? nullptr : &found->second;
}

}  // namespace websd::graph
