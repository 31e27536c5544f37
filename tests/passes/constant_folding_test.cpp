// Constant folding evaluates constant-only chains of the folded set into one constant node, with
// the values a float32 target computes, and never folds what depends on inputs or weights.
#include "passes/constant_folding.h"

#include <gtest/gtest.h>

#include <cmath>

#include "targets/cpu/reference/cpu_executor.h"
#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "models/graphs/sd_graphs.h"
#include "pass_test_support.h"
#include "passes/lower_composites.h"
#include "passes/verify.h"

namespace websd::passes {
namespace {

using graph::Function;
using graph::FunctionBuilder;
using graph::ValueId;

ValueId constant(FunctionBuilder& b, std::vector<double> values, Shape shape) {
  return b.op("constant", {}, {{"values", std::move(values)}, {"shape", std::move(shape)}});
}

// The values of the constant node producing `id`.
std::vector<double> constant_values(const Function& function, ValueId id) {
  const graph::Value& value = function.value(id);
  EXPECT_EQ(value.kind, graph::ValueKind::kNode);
  const graph::Node& node = function.nodes().at(value.node);
  EXPECT_EQ(node.op->name, "constant");
  return node.attrs.get_floats("values", "constant");
}

TEST(ConstantFolding, FoldsAShapeAndArithmeticChainIntoOneConstant) {
  Function function("f");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {2, 2}});
  const ValueId table = constant(b, {1, 2, 3, 4, 5, 6}, {2, 3});                     // [[1,2,3],[4,5,6]]
  const ValueId scaled = b.mul(table, b.scalar(2.0));                                // [[2,4,6],[8,10,12]]
  const ValueId shifted = b.add(scaled, constant(b, {1, -1}, {2, 1}));               // [[3,5,7],[7,9,11]]
  const ValueId transposed = b.permute(shifted, {1, 0});                             // [[3,7],[5,9],[7,11]]
  const ValueId rows = b.slice(transposed, 0, 1, 3);                                 // [[5,9],[7,11]]
  const ValueId wide = b.concat({rows, b.reshape(b.op("neg", {rows}), {2, 2})}, 1);  // [[5,9,-5,-9],[7,11,-7,-11]]
  const ValueId half = b.slice(wide, 1, 1, 3);                                       // [[9,-5],[11,-7]]
  function.set_outputs({b.add(x, half)});

  const ConstantFoldingResult result = fold_constants(function);
  EXPECT_NO_THROW(verify(result.function));
  EXPECT_EQ(result.folded_nodes, 8u);
  ASSERT_EQ(result.function.nodes().size(), 2u);
  EXPECT_EQ(result.function.nodes()[1].op->name, "add");
  const ValueId folded = result.function.nodes()[1].inputs[1];
  EXPECT_EQ(result.function.value(folded).type, (TensorType{DType::kF32, {2, 2}}));
  EXPECT_EQ(constant_values(result.function, folded), (std::vector<double>{9, -5, 11, -7}));
}

TEST(ConstantFolding, UnaryOpsComputeInFloat32) {
  const std::vector<double> inputs = {-2.5, -0.1, 0.0, 0.3, 1.7};
  for (const char* op : {"neg", "exp", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "silu", "gelu"}) {
    SCOPED_TRACE(op);
    Function function("f");
    FunctionBuilder b(function);
    const ValueId c = constant(b, inputs, {5});
    const bool positive_only = std::string(op) == "sqrt" || std::string(op) == "rsqrt";
    function.set_outputs({b.op(op, {positive_only ? b.op("exp", {c}) : c})});
    const ConstantFoldingResult result = fold_constants(function);
    ASSERT_EQ(result.function.nodes().size(), 1u);
    const auto folded = constant_values(result.function, result.function.outputs()[0]);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      float x = static_cast<float>(inputs[i]);
      if (positive_only) x = std::exp(x);
      const std::string name = op;
      const float expected = name == "neg"       ? -x
                             : name == "exp"     ? std::exp(x)
                             : name == "sqrt"    ? std::sqrt(x)
                             : name == "rsqrt"   ? 1.0f / std::sqrt(x)
                             : name == "sin"     ? std::sin(x)
                             : name == "cos"     ? std::cos(x)
                             : name == "tanh"    ? std::tanh(x)
                             : name == "sigmoid" ? 1.0f / (1.0f + std::exp(-x))
                             : name == "silu"    ? x / (1.0f + std::exp(-x))
                                                 : 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
      EXPECT_NEAR(folded[i], expected, 2e-7 * (1 + std::fabs(expected))) << i;
      EXPECT_EQ(folded[i], static_cast<double>(static_cast<float>(folded[i]))) << "stored as float32 values";
    }
  }
}

TEST(ConstantFolding, BroadcastingAndClamp) {
  Function function("f");
  FunctionBuilder b(function);
  const ValueId column = constant(b, {10, 20}, {2, 1});
  const ValueId row = constant(b, {1, 2, 3}, {3});
  const ValueId grid = b.div(b.sub(column, row), b.scalar(2.0));  // (column - row) / 2: [2,3]
  function.set_outputs({b.op("clamp", {grid}, {{"min", 5.0}, {"max", 9.0}})});
  const ConstantFoldingResult result = fold_constants(function);
  ASSERT_EQ(result.function.nodes().size(), 1u);
  EXPECT_EQ(result.function.value(result.function.outputs()[0]).type.shape, (Shape{2, 3}));
  EXPECT_EQ(constant_values(result.function, result.function.outputs()[0]), (std::vector<double>{5, 5, 5, 9, 9, 8.5}));
}

TEST(ConstantFolding, NeverFoldsWhatDependsOnInputsOrWeights) {
  Function function("f");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {3}});
  const ValueId w = b.weight("w", {3});
  const ValueId two = b.scalar(2.0);
  const ValueId from_weight = b.mul(w, two);
  const ValueId from_input = b.op("exp", {b.add(x, two)});
  function.set_outputs({b.add(from_weight, from_input)});
  const ConstantFoldingResult result = fold_constants(function);
  EXPECT_EQ(result.folded_nodes, 0u);
  EXPECT_EQ(test::count_op(result.function, "mul"), 1u);
  EXPECT_EQ(test::count_op(result.function, "exp"), 1u);
  EXPECT_EQ(test::count_op(result.function, "add"), 2u);
  EXPECT_EQ(test::count_op(result.function, "constant"), 1u) << "one constant, emitted once for both users";
}

TEST(ConstantFolding, KeepsOpsOutsideTheSetAndLargeResults) {
  Function function("f");
  FunctionBuilder b(function);
  const ValueId m = constant(b, {1, 2, 3, 4}, {2, 2});
  const ValueId product = b.matmul(m, m);  // not in the folded set
  const ValueId big =
      b.mul(constant(b, std::vector<double>(100, 1.0), {100, 1}), constant(b, std::vector<double>(100, 3.0), {1, 100}));
  function.set_outputs({b.add(product, b.scalar(1.0)), big});
  const ConstantFoldingResult result = fold_constants(function, 1000);
  EXPECT_NO_THROW(verify(result.function));
  EXPECT_EQ(result.folded_nodes, 0u);
  EXPECT_EQ(test::count_op(result.function, "matmul"), 1u);
  EXPECT_EQ(test::count_op(result.function, "mul"), 1u) << "a 100x100 result exceeds max_elements = 1000";
  const ConstantFoldingResult unlimited = fold_constants(function);
  EXPECT_EQ(unlimited.folded_nodes, 1u);
  EXPECT_EQ(constant_values(unlimited.function, unlimited.function.outputs()[1]), std::vector<double>(10000, 3.0));
}

TEST(ConstantFolding, FoldedGraphComputesWhatTheOriginalComputes) {
  // Run both on the CPU reference: folding must not change a single output value beyond rounding.
  Function function("f");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {2, 3, 4}});
  std::vector<double> ramp;
  for (int i = 0; i < 12; ++i) ramp.push_back(0.25 * i - 1.0);
  const ValueId table = b.permute(b.reshape(constant(b, ramp, {12}), {4, 3}), {1, 0});  // [3,4]
  const ValueId curve = b.op("silu", {b.mul(b.op("tanh", {table}), b.scalar(3.0))});
  function.set_outputs({b.mul(b.add(x, curve), b.op("sigmoid", {curve}))});
  const ConstantFoldingResult result = fold_constants(function);
  EXPECT_EQ(result.folded_nodes, 6u);

  cpu::CpuTensor input = cpu::CpuTensor::allocate({DType::kF32, {2, 3, 4}});
  for (std::size_t i = 0; i < input.f32->size(); ++i) (*input.f32)[i] = 0.1f * static_cast<float>(i) - 1.0f;
  const auto expected = cpu::CpuExecutor(function).run({input});
  const auto actual = cpu::CpuExecutor(result.function).run({input});
  ASSERT_EQ(actual[0].f32->size(), expected[0].f32->size());
  for (std::size_t i = 0; i < expected[0].f32->size(); ++i) {
    EXPECT_NEAR((*actual[0].f32)[i], (*expected[0].f32)[i], 1e-6f * (1 + std::fabs((*expected[0].f32)[i]))) << i;
  }
}

TEST(ConstantFolding, LoweredUNetStaysValidAndNeverGrows) {
  const Function unet = unet_graph(test::tiny_unet_config(), 2, 16, 16);
  const Function lowered = lower_composites(unet, [](const std::string&) { return false; });
  const ConstantFoldingResult result = fold_constants(lowered);
  EXPECT_NO_THROW(verify(result.function));
  EXPECT_LE(result.function.nodes().size(), lowered.nodes().size());
  EXPECT_EQ(result.function.weights().size(), lowered.weights().size());
  EXPECT_EQ(result.function.value(result.function.outputs()[0]).type, lowered.value(lowered.outputs()[0]).type);
}

}  // namespace
}  // namespace websd::passes
