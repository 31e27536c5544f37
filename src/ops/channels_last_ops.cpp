// Channels-last (NHWC) forms of the image ops, which the channels_last pass substitutes for their
// NCHW originals on targets whose kernels prefer that layout: convolution (with an optional fused
// residual add), group norm (with an optional fused SiLU) and nearest upsampling. Weights keep
// their checkpoint layout (conv weights OIHW); only activations are [N, H, W, C].
#include "ops/op_groups.h"

namespace websd::ops {
namespace {

std::vector<TensorType> infer_conv2d_nhwc(const std::vector<TensorType>& in, const Attrs& attrs) {
  expect_rank(in[0], 4, "input (N,H,W,C)");
  expect_rank(in[1], 4, "weight (O,C,kH,kW)");
  const std::int64_t stride = attrs.get_int("stride", 1, "conv2d_nhwc");
  const std::int64_t padding = attrs.get_int("padding", 0, "conv2d_nhwc");
  if (stride < 1 || padding < 0) op_type_error("stride must be >= 1 and padding >= 0");
  expect_compute_attr(attrs, "conv2d_nhwc");
  expect_weights_attr(attrs, "conv2d_nhwc");
  const auto& x = in[0].shape;
  const auto& w = in[1].shape;
  if (x[3] != w[1]) {
    op_type_error("input has " + std::to_string(x[3]) + " channels but weight expects " + std::to_string(w[1]));
  }
  if (in.size() >= 3 && in[2].shape != Shape{w[0]}) {
    op_type_error("bias must be [" + std::to_string(w[0]) + "], got " + in[2].to_string());
  }
  const std::int64_t h = (x[1] + 2 * padding - w[2]) / stride + 1;
  const std::int64_t wd = (x[2] + 2 * padding - w[3]) / stride + 1;
  if (h < 1 || wd < 1) op_type_error("kernel larger than the padded input");
  const TensorType out{in[0].dtype, {x[0], h, wd, w[0]}};
  if (in.size() == 4 && in[3] != out) {
    op_type_error("residual must be " + out.to_string() + ", got " + in[3].to_string());
  }
  return {out};
}

}  // namespace

void register_channels_last_ops(OpSink& sink) {
  sink.add({"conv2d_nhwc", 3, 4, kTraitNone, infer_conv2d_nhwc,
            "conv2d on NHWC activations (OIHW weight, bias), plus the 4th input when given (residual add); "
            "attrs stride, padding, compute (\"f32\" or \"bf16\": the type activations and weights enter the "
            "convolution in, accumulating in f32; absent: f32)"});

  sink.add({"group_norm_nhwc", 3, 3, kTraitNone,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              const std::string activation =
                  attrs.has("activation") ? attrs.get_string("activation", "group_norm_nhwc") : "";
              if (!activation.empty() && activation != "silu") {
                op_type_error("attribute 'activation' must be \"silu\" or absent");
              }
              return infer_group_norm(in, attrs, "group_norm_nhwc", 3);
            },
            "group_norm on NHWC activations, then the optional 'activation' (silu)"});

  sink.add({"upsample_nearest_nhwc", 1, 1, kTraitShapeOnly,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              return infer_upsample_nearest(in, attrs, "upsample_nearest_nhwc", 1);
            },
            "nearest-neighbour upsampling of H and W of NHWC activations by an integer scale"});
}

}  // namespace websd::ops
