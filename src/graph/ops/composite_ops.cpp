// Composite layers, each written once from primitive ops. A target may run a composite with a
// fused kernel of its own; otherwise the lower_composites pass expands it with `decompose`.
#include <cmath>

#include "graph/function_builder.h"
#include "graph/ops/op_groups.h"

namespace websd::graph {

std::vector<TensorType> infer_group_norm(const std::vector<TensorType>& in, const Attrs& attrs, const char* op,
                                         std::size_t channel_axis) {
  expect_rank(in[0], 4, channel_axis == 1 ? "input (N,C,H,W)" : "input (N,H,W,C)");
  const auto groups = attrs.get_int("groups", op);
  attrs.get_float("eps", op);
  const std::int64_t channels = in[0].shape[channel_axis];
  if (groups < 1 || channels % groups != 0) {
    op_type_error("attribute 'groups' = " + std::to_string(groups) + " does not divide " + std::to_string(channels) +
                  " channels");
  }
  if (in[1].shape != Shape{channels} || in[2].shape != Shape{channels}) op_type_error("gamma and beta must be [C]");
  return {in[0]};
}

namespace {

void add_composite(OpSink& sink, const char* name, int min_inputs, int max_inputs, InferFn infer, DecomposeFn decompose,
                   const char* summary) {
  sink.add({name, min_inputs, max_inputs, kTraitComposite, std::move(infer), std::move(decompose), summary});
}

std::vector<TensorType> same_as_first(const std::vector<TensorType>& in, const Attrs&) {
  expect_float(in[0], "input");
  return {in[0]};
}

// Normalises x over the axes given, then applies gamma/beta broadcast as `affine_shape`.
ValueId normalize(FunctionBuilder& b, ValueId x, std::vector<std::int64_t> axes, double eps) {
  const ValueId centered = b.sub(x, b.mean(x, axes));
  const ValueId variance = b.mean(b.mul(centered, centered), axes);
  return b.mul(centered, b.op("rsqrt", {b.add(variance, b.scalar(eps))}));
}

void register_norms(OpSink& sink) {
  add_composite(
      sink, "layer_norm", 3, 3,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        expect_float(in[0], "input");
        const Shape affine{in[0].shape.back()};
        if (in[1].shape != affine || in[2].shape != affine)
          op_type_error("gamma and beta must be " + shape_to_string(affine));
        attrs.get_float("eps", "layer_norm");
        return std::vector<TensorType>{in[0]};
      },
      [](FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
        const ValueId y = normalize(b, in[0], {-1}, attrs.get_float("eps", "layer_norm"));
        return std::vector<ValueId>{b.add(b.mul(y, in[1]), in[2])};
      },
      "(x - mean) / sqrt(var + eps) * gamma + beta over the last axis (biased variance)");

  add_composite(
      sink, "group_norm", 3, 3,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        return infer_group_norm(in, attrs, "group_norm", 1);
      },
      [](FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
        const Shape shape = b.shape(in[0]);
        const auto groups = attrs.get_int("groups", "group_norm");
        const ValueId grouped = b.reshape(in[0], {shape[0], groups, -1});
        const ValueId y = b.reshape(normalize(b, grouped, {-1}, attrs.get_float("eps", "group_norm")), shape);
        const ValueId gamma = b.reshape(in[1], {1, shape[1], 1, 1});
        const ValueId beta = b.reshape(in[2], {1, shape[1], 1, 1});
        return std::vector<ValueId>{b.add(b.mul(y, gamma), beta)};
      },
      "torch.nn.functional.group_norm over (C/groups, H, W) per group");
}

void register_activations(OpSink& sink) {
  add_composite(
      sink, "quick_gelu", 1, 1, same_as_first,
      [](FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs&) {
        return std::vector<ValueId>{b.mul(in[0], b.op("sigmoid", {b.mul(in[0], b.scalar(1.702))}))};
      },
      "x * sigmoid(1.702 x) (CLIP's activation)");

  add_composite(
      sink, "geglu", 1, 1,
      [](const std::vector<TensorType>& in, const Attrs&) {
        expect_float(in[0], "input");
        Shape shape = in[0].shape;
        if (shape.empty() || shape.back() % 2 != 0) op_type_error("last dimension must be even");
        shape.back() /= 2;
        return std::vector<TensorType>{{in[0].dtype, shape}};
      },
      [](FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs&) {
        const std::int64_t width = b.shape(in[0]).back() / 2;
        const ValueId hidden = b.slice(in[0], -1, 0, width);
        const ValueId gate = b.slice(in[0], -1, width, 2 * width);
        return std::vector<ValueId>{b.mul(hidden, b.op("gelu", {gate}))};
      },
      "first half * gelu(second half) of the last axis (diffusers GEGLU after its projection)");
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

void register_linear_and_attention(OpSink& sink) {
  add_composite(
      sink, "linear", 2, 3,
      [](const std::vector<TensorType>& in, const Attrs&) {
        expect_float(in[0], "input");
        expect_rank(in[1], 2, "weight (out, in)");
        if (in[0].shape.back() != in[1].shape[1]) {
          op_type_error("input width " + std::to_string(in[0].shape.back()) + " != weight in_features " +
                        std::to_string(in[1].shape[1]));
        }
        if (in.size() == 3 && in[2].shape != Shape{in[1].shape[0]}) op_type_error("bias must be [out_features]");
        Shape shape = in[0].shape;
        shape.back() = in[1].shape[0];
        return std::vector<TensorType>{{in[0].dtype, shape}};
      },
      [](FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs&) {
        const ValueId y = b.matmul(in[0], in[1], true);
        return std::vector<ValueId>{in.size() == 3 ? b.add(y, in[2]) : y};
      },
      "x @ W^T + b (torch.nn.Linear)");

  add_composite(
      sink, "attention", 3, 3,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        for (const auto& type : in) expect_rank(type, 4, "q, k and v (B,H,S,D)");
        const auto &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
        if (q[0] != k[0] || q[1] != k[1] || q[3] != k[3] || k[0] != v[0] || k[1] != v[1] || k[2] != v[2]) {
          op_type_error("q, k, v shapes disagree");
        }
        attrs.get_float("scale", "attention");
        // Optional kernel hint from the tuning database: query rows per block (see src/tuning).
        const auto block_rows = attrs.get_int("block_rows", 128, "attention");
        if (block_rows < 1 || block_rows > 4096) {
          op_type_error("attribute 'block_rows' = " + std::to_string(block_rows) + " must be in 1..4096");
        }
        return std::vector<TensorType>{{in[0].dtype, {q[0], q[1], q[2], v[3]}}};
      },
      [](FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
        ValueId scores = b.mul(b.matmul(in[0], in[1], true), b.scalar(attrs.get_float("scale", "attention")));
        if (attrs.get_int("causal", 0, "attention") != 0) scores = b.add(scores, causal_mask(b, b.shape(scores)));
        return std::vector<ValueId>{b.matmul(b.op("softmax", {scores}, {{"axis", std::int64_t{-1}}}), in[2])};
      },
      "softmax(q k^T * scale [+ causal mask: query i sees keys <= i]) v, in float32 (block_rows: a kernel hint)");

  add_composite(
      sink, "timestep_embedding", 1, 1,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        expect_rank(in[0], 1, "timesteps (B)");
        const auto dim = attrs.get_int("dim", "timestep_embedding");
        if (dim < 2 || dim % 2 != 0) op_type_error("attribute 'dim' must be even and >= 2");
        return std::vector<TensorType>{{DType::kF32, {in[0].shape[0], dim}}};
      },
      [](FunctionBuilder& b, const std::vector<ValueId>& in, const Attrs& attrs) {
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
        return std::vector<ValueId>{flip ? b.concat({cos, sin}, -1) : b.concat({sin, cos}, -1)};
      },
      "sinusoidal embedding of timesteps (diffusers get_timestep_embedding; attrs dim, flip_sin_to_cos, freq_shift)");
}

}  // namespace

void register_composite_ops(OpSink& sink) {
  register_norms(sink);
  register_activations(sink);
  register_linear_and_attention(sink);
}

}  // namespace websd::graph
