// Composite layers: ops written once from primitives (graph/op_decompositions.cpp holds how), which
// a target may instead run with a fused kernel of its own. Here: their arity and type inference.
#include "ops/op_groups.h"

namespace websd::ops {

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

void add_composite(OpSink& sink, const char* name, int min_inputs, int max_inputs, InferFn infer, const char* summary) {
  sink.add({name, min_inputs, max_inputs, kTraitComposite, std::move(infer), summary});
}

std::vector<TensorType> same_as_first(const std::vector<TensorType>& in, const Attrs&) {
  expect_float(in[0], "input");
  return {in[0]};
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
      "(x - mean) / sqrt(var + eps) * gamma + beta over the last axis (biased variance)");

  add_composite(
      sink, "group_norm", 3, 3,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        return infer_group_norm(in, attrs, "group_norm", 1);
      },
      "torch.nn.functional.group_norm over (C/groups, H, W) per group");
}

void register_activations(OpSink& sink) {
  add_composite(sink, "quick_gelu", 1, 1, same_as_first, "x * sigmoid(1.702 x) (CLIP's activation)");

  add_composite(
      sink, "geglu", 1, 1,
      [](const std::vector<TensorType>& in, const Attrs&) {
        expect_float(in[0], "input");
        Shape shape = in[0].shape;
        if (shape.empty() || shape.back() % 2 != 0) op_type_error("last dimension must be even");
        shape.back() /= 2;
        return std::vector<TensorType>{{in[0].dtype, shape}};
      },
      "first half * gelu(second half) of the last axis (diffusers GEGLU after its projection)");
}

void register_linear_and_attention(OpSink& sink) {
  add_composite(
      sink, "linear", 2, 3,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        expect_float(in[0], "input");
        expect_rank(in[1], 2, "weight (out, in)");
        expect_compute_attr(attrs, "linear");
        expect_weights_attr(attrs, "linear");
        if (in[0].shape.back() != in[1].shape[1]) {
          op_type_error("input width " + std::to_string(in[0].shape.back()) + " != weight in_features " +
                        std::to_string(in[1].shape[1]));
        }
        if (in.size() == 3 && in[2].shape != Shape{in[1].shape[0]}) op_type_error("bias must be [out_features]");
        Shape shape = in[0].shape;
        shape.back() = in[1].shape[0];
        return std::vector<TensorType>{{in[0].dtype, shape}};
      },
      "x @ W^T + b (torch.nn.Linear); attr compute (\"f32\" or \"bf16\": the type x and W enter the product "
      "in, accumulating in f32; absent: f32)");

  add_composite(
      sink, "attention", 3, 3,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        for (const auto& type : in) expect_rank(type, 4, "q, k and v (B,H,S,D)");
        const auto &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
        if (q[0] != k[0] || q[1] != k[1] || q[3] != k[3] || k[0] != v[0] || k[1] != v[1] || k[2] != v[2]) {
          op_type_error("q, k, v shapes disagree");
        }
        attrs.get_float("scale", "attention");
        expect_compute_attr(attrs, "attention");
        // Optional kernel hint from the tuning database: query rows per block (see src/tuning).
        const auto block_rows = attrs.get_int("block_rows", 128, "attention");
        if (block_rows < 1 || block_rows > 4096) {
          op_type_error("attribute 'block_rows' = " + std::to_string(block_rows) + " must be in 1..4096");
        }
        return std::vector<TensorType>{{in[0].dtype, {q[0], q[1], q[2], v[3]}}};
      },
      "softmax(q k^T * scale [+ causal mask: query i sees keys <= i]) v, in float32 (block_rows: a kernel hint; "
      "compute \"bf16\": q k^T and the probabilities times v take bf16 operands, accumulating in f32)");

  add_composite(
      sink, "timestep_embedding", 1, 1,
      [](const std::vector<TensorType>& in, const Attrs& attrs) {
        expect_rank(in[0], 1, "timesteps (B)");
        const auto dim = attrs.get_int("dim", "timestep_embedding");
        if (dim < 2 || dim % 2 != 0) op_type_error("attribute 'dim' must be even and >= 2");
        return std::vector<TensorType>{{DType::kF32, {in[0].shape[0], dim}}};
      },
      "sinusoidal embedding of timesteps (diffusers get_timestep_embedding; attrs dim, flip_sin_to_cos, freq_shift)");
}

}  // namespace

void register_composite_ops(OpSink& sink) {
  register_norms(sink);
  register_activations(sink);
  register_linear_and_attention(sink);
}

}  // namespace websd::ops
