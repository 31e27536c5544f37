// Matrix multiplication and 2-D convolution.
#include "ops/op_groups.h"

namespace websd::ops {

void register_linalg_ops(OpSink& sink) {
  sink.add({"matmul", 2, 2, kTraitNone,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              const bool transpose_b = attrs.get_int("transpose_b", 0, "matmul") != 0;
              if (in[0].rank() < 2 || in[1].rank() < 2) op_type_error("both inputs need rank >= 2");
              expect_float(in[0], "a");
              if (in[0].dtype != in[1].dtype) op_type_error("input dtypes differ");
              const auto& a = in[0].shape;
              const auto& b = in[1].shape;
              const std::int64_t k_a = a[a.size() - 1];
              const std::int64_t k_b = transpose_b ? b[b.size() - 1] : b[b.size() - 2];
              const std::int64_t n = transpose_b ? b[b.size() - 2] : b[b.size() - 1];
              if (k_a != k_b) {
                op_type_error("contraction sizes differ: a has K=" + std::to_string(k_a) +
                              ", b has K=" + std::to_string(k_b) + (transpose_b ? " (transpose_b=1)" : ""));
              }
              Shape batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
              batch.push_back(a[a.size() - 2]);
              batch.push_back(n);
              return std::vector<TensorType>{{in[0].dtype, batch}};
            },
            "a @ b (or a @ b^T with transpose_b=1), batch dimensions broadcast"});

  sink.add({"conv2d", 2, 3, kTraitNone,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              expect_rank(in[0], 4, "input (N,C,H,W)");
              expect_rank(in[1], 4, "weight (O,C/groups,kH,kW)");
              const std::int64_t stride = attrs.get_int("stride", 1, "conv2d");
              const std::int64_t padding = attrs.get_int("padding", 0, "conv2d");
              const std::int64_t groups = attrs.get_int("groups", 1, "conv2d");
              if (stride < 1 || padding < 0 || groups < 1) op_type_error("stride/groups must be >= 1 and padding >= 0");
              const auto& x = in[0].shape;
              const auto& w = in[1].shape;
              if (x[1] % groups != 0 || w[0] % groups != 0 || x[1] / groups != w[1]) {
                op_type_error("input has " + std::to_string(x[1]) + " channels but weight expects " +
                              std::to_string(w[1]) + " x groups=" + std::to_string(groups));
              }
              if (in.size() == 3 && in[2].shape != Shape{w[0]}) {
                op_type_error("bias must be [" + std::to_string(w[0]) + "], got " + in[2].to_string());
              }
              const std::int64_t h = (x[2] + 2 * padding - w[2]) / stride + 1;
              const std::int64_t wd = (x[3] + 2 * padding - w[3]) / stride + 1;
              if (h < 1 || wd < 1) op_type_error("kernel larger than the padded input");
              return std::vector<TensorType>{{in[0].dtype, {x[0], w[0], h, wd}}};
            },
            "2-D cross-correlation, NCHW input, OIHW weight, optional bias; attrs stride, padding, groups"});
}

}  // namespace websd::ops
