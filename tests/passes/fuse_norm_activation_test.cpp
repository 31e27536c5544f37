#include "passes/fuse_norm_activation.h"

#include <gtest/gtest.h>

#include "graph/function_builder.h"
#include "pass_test_support.h"
#include "passes/verify.h"

namespace websd::passes {
namespace {

graph::Function norm_then_silu(bool norm_read_twice) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {1, 3, 3, 8}});
  const auto norm = b.op("group_norm_nhwc", {x, b.weight("g", {8}), b.weight("b", {8})},
                         {{"groups", std::int64_t{4}}, {"eps", 1e-6}});
  const auto activated = b.op("silu", {norm});
  function.set_outputs(norm_read_twice ? std::vector<graph::ValueId>{activated, norm}
                                       : std::vector<graph::ValueId>{activated});
  return function;
}

TEST(FuseNormActivation, FoldsSiluIntoTheNorm) {
  const graph::Function result = fuse_norm_activation(norm_then_silu(false));
  verify(result);
  ASSERT_EQ(result.nodes().size(), 1u);
  EXPECT_EQ(result.nodes()[0].attrs.get_string("activation", "test"), "silu");
  EXPECT_EQ(result.outputs()[0], result.nodes()[0].outputs[0]);
}

TEST(FuseNormActivation, KeepsSiluWhenTheNormIsReadElsewhere) {
  const graph::Function result = fuse_norm_activation(norm_then_silu(true));
  EXPECT_EQ(test::count_op(result, "silu"), 1u);
  EXPECT_FALSE(result.nodes()[0].attrs.has("activation"));
}

}  // namespace
}  // namespace websd::passes
