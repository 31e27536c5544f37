// narrow_index_inputs: int64 inputs that only feed gather_rows' ids become int32 (WGSL has no
// 64-bit integers); any other use keeps them int64, and float inputs are untouched.
#include "passes/narrow_index_inputs.h"

#include <gtest/gtest.h>

#include "graph/function_builder.h"
#include "passes/verify.h"

namespace websd::passes {
namespace {

TEST(NarrowIndexInputs, TokenIdsThatOnlyIndexATableBecomeInt32) {
  graph::Function function("clip");
  graph::FunctionBuilder b(function);
  const auto ids = b.input("ids", {DType::kI64, {2, 77}});
  const auto scale = b.input("scale", {DType::kF32, {1}});
  const auto table = b.weight("token_embedding", {49, 8});
  function.set_outputs({b.mul(b.op("gather_rows", {table, ids}), scale)});
  const graph::Function narrowed = narrow_index_inputs(function);
  verify(narrowed);
  EXPECT_EQ(narrowed.value(narrowed.inputs()[0]).type, (TensorType{DType::kI32, {2, 77}}));
  EXPECT_EQ(narrowed.value(narrowed.inputs()[0]).name, "ids");
  EXPECT_EQ(narrowed.value(narrowed.inputs()[1]).type, (TensorType{DType::kF32, {1}}));
  EXPECT_EQ(narrowed.nodes().size(), function.nodes().size());
  EXPECT_EQ(narrowed.value(narrowed.outputs()[0]).type, function.value(function.outputs()[0]).type);
}

TEST(NarrowIndexInputs, AnInputWithAnotherUseOrReturnedStaysInt64) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto ids = b.input("ids", {DType::kI64, {4}});
  const auto table = b.weight("t", {10, 2});
  function.set_outputs({b.op("gather_rows", {table, ids}), ids});
  EXPECT_EQ(narrow_index_inputs(function).value(0).type.dtype, DType::kI64);
}

}  // namespace
}  // namespace websd::passes
