// Convolution and matmul kernels against direct loops.
#include <gtest/gtest.h>

#include "targets/cpu/reference/cpu_executor.h"
#include "cpu_test_util.h"
#include "graph/function_builder.h"

namespace websd::cpu {
namespace {

std::vector<float> naive_conv(const CpuTensor& x, const CpuTensor& w, const CpuTensor& bias, std::int64_t stride,
                              std::int64_t pad, const Shape& out) {
  const Shape& xs = x.type.shape;
  const Shape& ws = w.type.shape;
  std::vector<float> y(static_cast<std::size_t>(shape_numel(out)));
  for (std::int64_t n = 0; n < out[0]; ++n)
    for (std::int64_t o = 0; o < out[1]; ++o)
      for (std::int64_t oy = 0; oy < out[2]; ++oy)
        for (std::int64_t ox = 0; ox < out[3]; ++ox) {
          double sum = (*bias.f32)[o];
          for (std::int64_t c = 0; c < xs[1]; ++c)
            for (std::int64_t ky = 0; ky < ws[2]; ++ky)
              for (std::int64_t kx = 0; kx < ws[3]; ++kx) {
                const std::int64_t iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                if (iy < 0 || ix < 0 || iy >= xs[2] || ix >= xs[3]) continue;
                sum += (*x.f32)[((n * xs[1] + c) * xs[2] + iy) * xs[3] + ix] *
                       (*w.f32)[((o * ws[1] + c) * ws[2] + ky) * ws[3] + kx];
              }
          y[((n * out[1] + o) * out[2] + oy) * out[3] + ox] = static_cast<float>(sum);
        }
  return y;
}

struct ConvCase {
  Shape x, w;
  std::int64_t stride, pad;
};

class ConvKernel : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvKernel, MatchesDirectLoops) {
  const ConvCase& c = GetParam();
  graph::Function function("conv");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, c.x});
  const auto w = b.input("w", {DType::kF32, c.w});
  const auto bias = b.input("b", {DType::kF32, {c.w[0]}});
  const auto y = b.op("conv2d", {x, w, bias}, {{"stride", c.stride}, {"padding", c.pad}});
  function.set_outputs({y});
  CpuExecutor executor(function);
  executor.bind_weights(nullptr);
  const std::vector<CpuTensor> inputs = {test::random_tensor(c.x, 1), test::random_tensor(c.w, 2),
                                         test::random_tensor({c.w[0]}, 3)};
  const auto out = executor.run(inputs)[0];
  EXPECT_LT(test::relative_l2(*out.f32, naive_conv(inputs[0], inputs[1], inputs[2], c.stride, c.pad, out.type.shape)),
            1e-6);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvKernel,
                         ::testing::Values(ConvCase{{2, 3, 9, 7}, {5, 3, 3, 3}, 1, 1},
                                           ConvCase{{1, 4, 8, 8}, {6, 4, 3, 3}, 2, 1},
                                           ConvCase{{1, 4, 9, 9}, {6, 4, 3, 3}, 2, 0},
                                           ConvCase{{2, 4, 5, 5}, {3, 4, 1, 1}, 1, 0}));

TEST(MatmulKernel, BroadcastsBatchDimensions) {
  graph::Function function("mm");
  graph::FunctionBuilder b(function);
  const auto a = b.input("a", {DType::kF32, {2, 3, 4, 5}});
  const auto m = b.input("m", {DType::kF32, {3, 6, 5}});
  function.set_outputs({b.matmul(a, m, true)});
  CpuExecutor executor(function);
  executor.bind_weights(nullptr);
  const std::vector<CpuTensor> inputs = {test::random_tensor({2, 3, 4, 5}, 4), test::random_tensor({3, 6, 5}, 5)};
  const auto out = executor.run(inputs)[0];
  ASSERT_EQ(out.type.shape, (Shape{2, 3, 4, 6}));
  std::vector<float> expected(out.f32->size());
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 3; ++h)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j) {
          double sum = 0;
          for (int k = 0; k < 5; ++k) sum += (*inputs[0].f32)[((n * 3 + h) * 4 + i) * 5 + k] * (*inputs[1].f32)[(h * 6 + j) * 5 + k];
          expected[((n * 3 + h) * 4 + i) * 6 + j] = static_cast<float>(sum);
        }
  EXPECT_LT(test::relative_l2(*out.f32, expected), 1e-6);
}

}  // namespace
}  // namespace websd::cpu
