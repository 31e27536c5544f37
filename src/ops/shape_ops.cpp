// Ops that move or select data without arithmetic.
#include <algorithm>

#include "ops/op_groups.h"

namespace websd::ops {

std::vector<TensorType> infer_upsample_nearest(const std::vector<TensorType>& in, const Attrs& attrs, const char* op,
                                               std::size_t height_axis) {
  expect_rank(in[0], 4, height_axis == 2 ? "input (N,C,H,W)" : "input (N,H,W,C)");
  const auto scale = attrs.get_int("scale", op);
  if (scale < 1) op_type_error("attribute 'scale' must be >= 1");
  Shape shape = in[0].shape;
  shape[height_axis] *= scale;
  shape[height_axis + 1] *= scale;
  return std::vector<TensorType>{{in[0].dtype, shape}};
}

void register_shape_ops(OpSink& sink) {
  sink.add({"reshape", 1, 1, kTraitShapeOnly,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              Shape shape = attrs.get_ints("shape", "reshape");
              const auto inferred = std::count(shape.begin(), shape.end(), -1);
              if (inferred > 1) op_type_error("attribute 'shape' may hold at most one -1");
              std::int64_t known = 1;
              for (const auto dim : shape) {
                if (dim == 0 || dim < -1)
                  op_type_error("attribute 'shape' = " + shape_to_string(shape) + " has a bad dimension");
                if (dim != -1) known *= dim;
              }
              const std::int64_t total = in[0].numel();
              if (inferred) {
                if (total % known != 0)
                  op_type_error("attribute 'shape' = " + shape_to_string(shape) + ": cannot infer -1 from " +
                                std::to_string(total) + " elements");
                std::replace(shape.begin(), shape.end(), std::int64_t{-1}, total / known);
              }
              if (shape_numel(shape) != total) {
                op_type_error("attribute 'shape' = " + shape_to_string(shape) + " does not hold " +
                              std::to_string(total) + " elements");
              }
              return std::vector<TensorType>{{in[0].dtype, shape}};
            },
            "same elements, new shape (one -1 inferred)"});

  sink.add({"permute", 1, 1, kTraitShapeOnly,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              const auto& perm = attrs.get_ints("perm", "permute");
              if (static_cast<std::int64_t>(perm.size()) != in[0].rank())
                op_type_error("attribute 'perm' length != rank");
              std::vector<bool> seen(perm.size(), false);
              Shape shape;
              for (const auto axis : perm) {
                if (axis < 0 || axis >= in[0].rank() || seen[axis])
                  op_type_error("attribute 'perm' is not a permutation");
                seen[axis] = true;
                shape.push_back(in[0].shape[axis]);
              }
              return std::vector<TensorType>{{in[0].dtype, shape}};
            },
            "out.shape[i] = in.shape[perm[i]] (torch.permute)"});

  sink.add({"slice", 1, 1, kTraitShapeOnly,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              const auto axis = normalize_axis(attrs.get_int("axis", "slice"), in[0].rank(), "axis");
              const auto start = attrs.get_int("start", "slice");
              const auto end = attrs.get_int("end", "slice");
              if (start < 0 || end > in[0].shape[axis] || start >= end) {
                op_type_error("range [" + std::to_string(start) + "," + std::to_string(end) +
                              ") outside axis of size " + std::to_string(in[0].shape[axis]));
              }
              Shape shape = in[0].shape;
              shape[axis] = end - start;
              return std::vector<TensorType>{{in[0].dtype, shape}};
            },
            "elements [start, end) along axis"});

  sink.add({"concat", 1, 64, kTraitShapeOnly,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              const auto axis = normalize_axis(attrs.get_int("axis", "concat"), in[0].rank(), "axis");
              Shape shape = in[0].shape;
              for (std::size_t i = 1; i < in.size(); ++i) {
                Shape other = in[i].shape;
                if (in[i].dtype != in[0].dtype || other.size() != shape.size())
                  op_type_error("inputs differ in dtype or rank");
                other[axis] = shape[axis];
                if (other != shape) op_type_error("input " + std::to_string(i) + " differs outside the concat axis");
                shape[axis] += in[i].shape[axis];
              }
              return std::vector<TensorType>{{in[0].dtype, shape}};
            },
            "joins inputs along axis"});

  sink.add({"upsample_nearest", 1, 1, kTraitShapeOnly,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              return infer_upsample_nearest(in, attrs, "upsample_nearest", 2);
            },
            "nearest-neighbour upsampling of H and W by an integer scale"});

  // Constant padding; the VAE encoder's downsampler pads (right, bottom) by one before a stride-2 conv.
  sink.add({"pad", 1, 1, kTraitNone,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              const auto& pads = attrs.get_ints("pads", "pad");
              if (static_cast<std::int64_t>(pads.size()) != 2 * in[0].rank()) {
                op_type_error("attribute 'pads' needs 2 x rank = " + std::to_string(2 * in[0].rank()) +
                              " entries (before, after per axis), got " + std::to_string(pads.size()));
              }
              attrs.get_float("value", 0.0, "pad");
              Shape shape = in[0].shape;
              for (std::size_t axis = 0; axis < shape.size(); ++axis) {
                if (pads[2 * axis] < 0 || pads[2 * axis + 1] < 0) op_type_error("attribute 'pads' must be >= 0");
                shape[axis] += pads[2 * axis] + pads[2 * axis + 1];
              }
              return std::vector<TensorType>{{in[0].dtype, shape}};
            },
            "surrounds axis i with pads[2i] values before and pads[2i+1] after, all equal to 'value' (0)"});

  sink.add({"gather_rows", 2, 2, kTraitNone,
            [](const std::vector<TensorType>& in, const Attrs&) {
              expect_rank(in[0], 2, "table (rows, width)");
              if (in[1].dtype != DType::kI64 && in[1].dtype != DType::kI32) op_type_error("indices must be I64 or I32");
              Shape shape = in[1].shape;
              shape.push_back(in[0].shape[1]);
              return std::vector<TensorType>{{in[0].dtype, shape}};
            },
            "table[indices] (an embedding lookup); an index out of range is a run-time error"});
}

}  // namespace websd::ops
