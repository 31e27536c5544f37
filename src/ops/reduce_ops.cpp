// Reductions along axes.
#include <algorithm>

#include "ops/op_groups.h"

namespace websd::ops {

void register_reduce_ops(OpSink& sink) {
  sink.add({"mean", 1, 1, kTraitNone,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              expect_float(in[0], "input");
              std::vector<bool> reduced(in[0].shape.size(), false);
              for (const auto axis : attrs.get_ints("axes", "mean"))
                reduced[normalize_axis(axis, in[0].rank(), "axes")] = true;
              const bool keepdim = attrs.get_int("keepdim", 1, "mean") != 0;
              Shape shape;
              for (std::size_t i = 0; i < reduced.size(); ++i) {
                if (!reduced[i])
                  shape.push_back(in[0].shape[i]);
                else if (keepdim)
                  shape.push_back(1);
              }
              return std::vector<TensorType>{{in[0].dtype, shape}};
            },
            "arithmetic mean over axes (keepdim default 1)"});

  sink.add({"softmax", 1, 1, kTraitNone,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              expect_float(in[0], "input");
              normalize_axis(attrs.get_int("axis", -1, "softmax"), in[0].rank(), "axis");
              return std::vector<TensorType>{in[0]};
            },
            "exp(x - max) / sum along axis (default -1)"});
}

}  // namespace websd::ops
