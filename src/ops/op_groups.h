// Registration entry points of the op groups; each group lives in its own file under ops/.
#pragma once

#include "ops/op_registry.h"

namespace websd::ops {

class OpSink {
 public:
  virtual ~OpSink() = default;
  virtual void add(OpDef def) = 0;
};

void register_elementwise_ops(OpSink& sink);    // unary/binary arithmetic with broadcasting, constants, casts
void register_linalg_ops(OpSink& sink);         // matmul, conv2d
void register_shape_ops(OpSink& sink);          // reshape, permute, slice, concat, upsample, gather
void register_reduce_ops(OpSink& sink);         // mean, softmax
void register_composite_ops(OpSink& sink);      // layer_norm, group_norm, attention, gelu variants, ...
void register_channels_last_ops(OpSink& sink);  // NHWC forms of conv2d, group_norm, upsample_nearest
void register_fused_ops(OpSink& sink);          // fused_elementwise (written by passes, lowered by codegen)

// Shared inference helpers.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Normalises a possibly negative axis against `rank`; errors name the attribute.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const char* attr_name);
void expect_rank(const TensorType& type, std::int64_t rank, const char* what);
void expect_float(const TensorType& type, const char* what);
// The optional attribute `compute` of the ops whose products the CPU may take in bf16 (conv2d_nhwc,
// linear, attention): "f32" or "bf16", the type operands enter the products in (accumulating in f32).
void expect_compute_attr(const Attrs& attrs, const char* op);
// The optional attribute `weights` of the ops whose weights the CPU may hold in f16 (conv2d_nhwc,
// linear): "f32" or "f16", how the weight is held (an f16 one is widened to f32 for each call).
void expect_weights_attr(const Attrs& attrs, const char* op);
// GroupNorm over rank-4 input whose channels are axis `channel_axis` (1 for NCHW, 3 for NHWC),
// gamma and beta [C]; attributes groups (dividing C) and eps.
std::vector<TensorType> infer_group_norm(const std::vector<TensorType>& in, const Attrs& attrs, const char* op,
                                         std::size_t channel_axis);
// Nearest upsampling of the two spatial axes starting at `height_axis` (2 for NCHW, 1 for NHWC).
std::vector<TensorType> infer_upsample_nearest(const std::vector<TensorType>& in, const Attrs& attrs, const char* op,
                                               std::size_t height_axis);

}  // namespace websd::ops
