#include "passes/fuse_conv_residual.h"

#include <gtest/gtest.h>

#include "graph/function_builder.h"
#include "pass_test_support.h"
#include "passes/verify.h"

namespace websd::passes {
namespace {

// conv2d_nhwc(x) + residual, with the conv result optionally read a second time.
graph::Function conv_plus_residual(bool conv_read_twice) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {1, 4, 4, 3}});
  const auto residual = b.input("r", {DType::kF32, {1, 4, 4, 5}});
  const auto conv =
      b.op("conv2d_nhwc", {x, b.weight("w", {5, 3, 3, 3}), b.weight("b", {5})}, {{"padding", std::int64_t{1}}});
  const auto sum = b.add(residual, conv);
  function.set_outputs(conv_read_twice ? std::vector<graph::ValueId>{sum, conv} : std::vector<graph::ValueId>{sum});
  return function;
}

TEST(FuseConvResidual, FoldsTheAddIntoTheConvolution) {
  const graph::Function result = fuse_conv_residual(conv_plus_residual(false));
  verify(result);
  EXPECT_EQ(test::count_op(result, "add"), 0u);
  ASSERT_EQ(result.nodes().size(), 1u);
  EXPECT_EQ(result.nodes()[0].inputs.size(), 4u);
  EXPECT_EQ(result.nodes()[0].inputs[3], result.inputs()[1]);  // the residual
}

TEST(FuseConvResidual, KeepsTheAddWhenTheConvolutionIsReadElsewhere) {
  const graph::Function result = fuse_conv_residual(conv_plus_residual(true));
  EXPECT_EQ(test::count_op(result, "add"), 1u);
  EXPECT_EQ(result.nodes()[0].inputs.size(), 3u);
}

}  // namespace
}  // namespace websd::passes
