// to_channels_last: which ops move to NHWC, which conversions it inserts, and that functions
// without convolutions are left alone. (Numerical equivalence on whole networks:
// tests/model_graphs/cpu_optimization_test.cpp.)
#include "passes/channels_last.h"

#include <gtest/gtest.h>

#include "graph/function_builder.h"
#include "models/graphs/sd_graphs.h"
#include "pass_test_support.h"
#include "passes/verify.h"

namespace websd::passes {
namespace {

TEST(ChannelsLast, ResnetChainStaysInNhwcBetweenOneConversionInAndOneOut) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {1, 4, 6, 5}});
  const auto conv =
      b.op("conv2d", {x, b.weight("w", {8, 4, 3, 3}), b.weight("b", {8})}, {{"padding", std::int64_t{1}}});
  const auto norm = b.op("silu", {b.op("group_norm", {conv, b.weight("g", {8}), b.weight("beta", {8})},
                                       {{"groups", std::int64_t{2}}, {"eps", 1e-5}})});
  const auto bias = b.reshape(b.weight("t", {8}), {1, 8, 1, 1});  // broadcast like a time embedding
  const auto up = b.op("upsample_nearest", {b.add(norm, bias)}, {{"scale", std::int64_t{2}}});
  function.set_outputs({b.concat({up, up}, 1)});

  const graph::Function result = to_channels_last(function);
  verify(result);
  EXPECT_EQ(test::count_op(result, "conv2d"), 0u);
  EXPECT_EQ(test::count_op(result, "conv2d_nhwc"), 1u);
  EXPECT_EQ(test::count_op(result, "group_norm_nhwc"), 1u);
  EXPECT_EQ(test::count_op(result, "upsample_nearest_nhwc"), 1u);
  // x to NHWC and the output back; the [1,8,1,1] bias becomes [1,1,1,8] by a reshape.
  EXPECT_EQ(test::count_op(result, "permute"), 2u);
  EXPECT_EQ(result.value(result.outputs()[0]).type, function.value(function.outputs()[0]).type);
  EXPECT_EQ(result.value(result.inputs()[0]).type, function.value(function.inputs()[0]).type);
}

TEST(ChannelsLast, PixelsToTokensBecomesAReshapeOfTheNhwcTensor) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 4, 3, 5}});
  const auto conv = b.op("conv2d", {x, b.weight("w", {6, 4, 1, 1}), b.weight("b", {6})});
  const auto tokens = b.permute(b.reshape(conv, {2, 6, 15}), {0, 2, 1});  // [2,15,6]
  const auto projected = b.op("linear", {tokens, b.weight("p", {6, 6})});
  const auto pixels = b.reshape(b.permute(projected, {0, 2, 1}), {2, 6, 3, 5});
  function.set_outputs({b.add(pixels, conv)});

  const graph::Function result = to_channels_last(function);
  verify(result);
  // Only the entry and exit conversions remain; the token round trip is free.
  EXPECT_EQ(test::count_op(result, "permute"), 2u);
}

TEST(ChannelsLast, LeavesFunctionsWithoutConvolutionsUnchanged) {
  const graph::Function function = test::small_function();
  const graph::Function result = to_channels_last(function);
  ASSERT_EQ(result.nodes().size(), function.nodes().size());
  for (std::size_t i = 0; i < result.nodes().size(); ++i) EXPECT_EQ(result.nodes()[i].op, function.nodes()[i].op);
}

TEST(ChannelsLast, Sd15UNetNeedsNoConversionsInsideTheNetwork) {
  const graph::Function unet = unet_graph(test::preset_unet_config("sd15"), 2, 64, 64, 77);
  const graph::Function result = to_channels_last(unet);
  verify(result);
  EXPECT_EQ(test::count_op(result, "conv2d"), 0u);
  // Permutes that exist anyway (attention heads split and merged) plus one in and one out.
  EXPECT_EQ(test::count_op(result, "permute"), test::count_op(unet, "permute") - 2 * 16 + 2);
}

}  // namespace
}  // namespace websd::passes
