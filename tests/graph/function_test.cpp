#include "graph/function.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "graph/function_builder.h"

namespace websd::graph {
namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(Function, InfersShapesWhenNodesAreAdded) {
  Function function("f");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {2, 77, 768}});
  const ValueId w = b.weight("proj.weight", {320, 768});
  const ValueId y = b.op("linear", {x, w});
  EXPECT_EQ(b.shape(y), (Shape{2, 77, 320}));
  EXPECT_EQ(b.shape(b.matmul(x, w, true)), (Shape{2, 77, 320}));
  EXPECT_EQ(b.shape(b.add(y, b.scalar(1.0))), (Shape{2, 77, 320}));
  EXPECT_EQ(b.shape(b.reshape(y, {2, 77, 8, -1})), (Shape{2, 77, 8, 40}));
  EXPECT_EQ(b.shape(b.permute(b.reshape(y, {2, 77, 8, 40}), {0, 2, 1, 3})), (Shape{2, 8, 77, 40}));
}

TEST(Function, ShapeErrorsNameOpInputsAndAttribute) {
  Function function("unet");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {1, 4, 64, 64}});
  const ValueId w = b.weight("conv_in.weight", {320, 8, 3, 3});
  const std::string message = error_of([&] { b.op("conv2d", {x, w}, {{"padding", std::int64_t{1}}}); });
  EXPECT_NE(message.find("unet"), std::string::npos) << message;
  EXPECT_NE(message.find("conv2d"), std::string::npos) << message;
  EXPECT_NE(message.find("f32[1,4,64,64]"), std::string::npos) << message;
  EXPECT_NE(message.find("padding=1"), std::string::npos) << message;

  const std::string reshape = error_of([&] { b.reshape(x, {3, -1}); });
  EXPECT_NE(reshape.find("'shape'"), std::string::npos) << reshape;
  EXPECT_NE(error_of([&] { b.add(x, b.input("y", {DType::kF32, {3}})); }).find("broadcast"), std::string::npos);
  EXPECT_NE(error_of([&] { b.op("no_such_op", {x}); }).find("unknown op 'no_such_op'"), std::string::npos);
  EXPECT_NE(error_of([&] { b.op("group_norm", {x, x, x}, {{"groups", std::int64_t{3}}, {"eps", 1e-5}}); })
                .find("groups"),
            std::string::npos);
}

TEST(Function, DuplicateInputOrWeightNamesAreErrors) {
  Function function("f");
  function.add_input("x", {DType::kF32, {1}});
  function.add_weight("w", {DType::kF32, {1}});
  EXPECT_THROW(function.add_input("x", {DType::kF32, {1}}), Error);
  EXPECT_THROW(function.add_weight("w", {DType::kF32, {1}}), Error);
}

TEST(Function, ScopesPrefixWeightNames) {
  Function function("f");
  FunctionBuilder b(function);
  {
    auto outer = b.scope("down_blocks.0");
    auto inner = b.scope("resnets.1");
    b.weight("conv1.weight", {4, 4, 3, 3});
  }
  b.weight("conv_in.weight", {4, 4, 3, 3});
  EXPECT_EQ(function.value(function.weights()[0]).name, "down_blocks.0.resnets.1.conv1.weight");
  EXPECT_EQ(function.value(function.weights()[1]).name, "conv_in.weight");
}

}  // namespace
}  // namespace websd::graph
