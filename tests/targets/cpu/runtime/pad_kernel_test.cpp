// The pad op: shape inference, attribute errors, and the CPU kernel against direct index arithmetic.
#include <gtest/gtest.h>

#include "core/error.h"
#include "targets/cpu/reference/cpu_executor.h"
#include "cpu_test_util.h"
#include "graph/function_builder.h"

namespace websd::cpu {
namespace {

struct PadCase {
  Shape x;
  std::vector<std::int64_t> pads;
  double value;
};

class PadKernel : public ::testing::TestWithParam<PadCase> {};

TEST_P(PadKernel, MatchesIndexArithmetic) {
  const PadCase& c = GetParam();
  graph::Function function("pad");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, c.x});
  function.set_outputs({b.op("pad", {x}, {{"pads", c.pads}, {"value", c.value}})});
  CpuExecutor executor(function);
  executor.bind_weights(nullptr);
  const CpuTensor input = test::random_tensor(c.x, 1);
  const CpuTensor out = executor.run({input})[0];
  const Shape& y = out.type.shape;
  ASSERT_EQ(y.size(), c.x.size());
  for (std::size_t d = 0; d < y.size(); ++d) EXPECT_EQ(y[d], c.x[d] + c.pads[2 * d] + c.pads[2 * d + 1]) << d;
  std::vector<std::int64_t> index(y.size(), 0);
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    std::int64_t rest = i, source = 0, stride = 1;
    bool inside = true;
    for (std::size_t d = y.size(); d-- > 0;) {
      const std::int64_t at = rest % y[d] - c.pads[2 * d];
      rest /= y[d];
      inside = inside && at >= 0 && at < c.x[d];
      source += at * stride;
      stride *= c.x[d];
    }
    const float expected = inside ? (*input.f32)[source] : static_cast<float>(c.value);
    ASSERT_EQ((*out.f32)[i], expected) << "output element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PadKernel,
                         ::testing::Values(PadCase{{2, 3, 4, 5}, {0, 0, 0, 0, 0, 1, 0, 1}, 0.0},  // VAE downsampler
                                           PadCase{{2, 3, 4}, {1, 0, 0, 2, 3, 1}, -0.5},
                                           PadCase{{3, 2}, {0, 0, 0, 0}, 0.0}));

TEST(PadOp, RefusesBadPads) {
  graph::Function function("pad");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {1, 2, 3, 3}});
  EXPECT_THROW(b.op("pad", {x}, {{"pads", std::vector<std::int64_t>{0, 1, 0, 1}}}), Error);
  EXPECT_THROW(b.op("pad", {x}, {{"pads", std::vector<std::int64_t>{0, 0, 0, 0, -1, 0, 0, 0}}}), Error);
}

}  // namespace
}  // namespace websd::cpu
