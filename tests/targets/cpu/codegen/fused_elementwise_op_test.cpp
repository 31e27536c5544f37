// The fused_elementwise graph op: shape and dtype inference, program validation with errors that
// name the op and the attribute, the program text round trip and the loop nest that kernels use.
#include <gtest/gtest.h>

#include "core/error.h"
#include "graph/function.h"
#include "ops/fused_program.h"

namespace websd::graph {
namespace {

using ops::fused_loop_nest;
using ops::fused_opcode_for_op;
using ops::fused_program_parse;
using ops::fused_program_text;
using ops::FusedInstruction;
using ops::FusedLoopNest;
using ops::FusedOpcode;
using ops::FusedProgram;

Attrs fused(const std::string& program, std::vector<double> constants = {}, const std::string& kernel = "k0") {
  Attrs attrs{{"program", program}, {"kernel", kernel}};
  if (!constants.empty()) attrs.set("constants", constants);
  return attrs;
}

// Adds a fused_elementwise node over inputs of `types`; returns its output type.
TensorType infer(const std::vector<TensorType>& types, const Attrs& attrs) {
  Function function("f");
  std::vector<ValueId> inputs;
  for (std::size_t i = 0; i < types.size(); ++i)
    inputs.push_back(function.add_input(std::string("x").append(std::to_string(i)), types[i]));
  return function.value(function.add_node("fused_elementwise", inputs, attrs)[0]).type;
}

// The message of the websd::Error that inferring throws; fails the test when none is thrown.
std::string infer_error(const std::vector<TensorType>& types, const Attrs& attrs) {
  try {
    infer(types, attrs);
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error for program " << attrs.to_string();
  return "";
}

const TensorType kA{DType::kF32, {2, 1, 4}};
const TensorType kB{DType::kF32, {3, 1}};

TEST(FusedElementwiseOp, OutputIsTheBroadcastOfItsInputs) {
  EXPECT_EQ(infer({kA, kB}, fused("in0 in1 add silu")), (TensorType{DType::kF32, {2, 3, 4}}));
  EXPECT_EQ(infer({kA, {DType::kF32, {}}}, fused("in0 c0 mul in1 max", {2.0})), kA);
  // An input the program never reads still takes part in the broadcast.
  EXPECT_EQ(infer({kA, kB}, fused("in0 exp")), (TensorType{DType::kF32, {2, 3, 4}}));
  EXPECT_EQ(infer({{DType::kF16, {5}}, {DType::kF16, {5}}}, fused("in0 in1 sub")), (TensorType{DType::kF16, {5}}));
}

TEST(FusedElementwiseOp, ProgramErrorsNameTheOpTheAttributeAndTheInstruction) {
  struct Case {
    std::string program;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {"in0 in1 add frobnicate", {"instruction 4 'frobnicate'", "is not an instruction"}},
      {"in0 add", {"instruction 2 'add'", "stack underflow"}},
      {"in0 in2 mul", {"instruction 2 'in2'", "input out of range", "2 inputs"}},
      {"in0 c1 mul", {"instruction 2 'c1'", "constant out of range", "holds 1 values"}},
      {"in0 in-1 add", {"'in-1'", "is not an instruction"}},
      {"in0 in1", {"leaves 2 values", "exactly 1"}},
      {"   ", {"is empty"}},
  };
  for (const Case& c : cases) {
    const std::string message = infer_error({kA, kB}, fused(c.program, {1.0}));
    EXPECT_NE(message.find("fused_elementwise"), std::string::npos) << message;
    EXPECT_NE(message.find("'program'"), std::string::npos) << message;
    for (const std::string& needle : c.needles) EXPECT_NE(message.find(needle), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(FusedElementwiseOp, RejectsBadKernelNamesDtypesAndShapes) {
  EXPECT_NE(infer_error({kA}, fused("in0 exp", {}, "7up")).find("attribute 'kernel'"), std::string::npos);
  EXPECT_NE(infer_error({kA}, fused("in0 exp", {}, "a-b")).find("attribute 'kernel'"), std::string::npos);
  EXPECT_NE(infer_error({kA}, Attrs{{"program", std::string("in0 exp")}}).find("kernel"), std::string::npos);
  EXPECT_NE(infer_error({kA, {DType::kF16, {4}}}, fused("in0 in1 add")).find("dtypes differ"), std::string::npos);
  EXPECT_NE(infer_error({{DType::kI64, {4}}}, fused("in0 neg")).find("must be a float tensor"), std::string::npos);
  EXPECT_NE(infer_error({kA, {DType::kF32, {3, 3}}}, fused("in0 in1 add")).find("do not broadcast"), std::string::npos);
}

TEST(FusedProgram, TextRoundTripsAndCountsTheStackDepth) {
  const std::string text = "in0 in1 c0 mul add silu in0 c1 max min neg quick_gelu";
  const FusedProgram program = fused_program_parse(text, 2, 2);
  EXPECT_EQ(fused_program_text(program.code), text);
  EXPECT_EQ(program.max_depth, 3);
  ASSERT_EQ(program.code.size(), 12u);
  EXPECT_EQ(program.code[2], (FusedInstruction{FusedOpcode::kConstant, 0}));
  EXPECT_EQ(program.code[5].opcode, FusedOpcode::kSilu);
  EXPECT_EQ(fused_opcode_for_op("gelu"), FusedOpcode::kGelu);
  EXPECT_EQ(fused_opcode_for_op("max"), std::nullopt);  // an instruction, but no graph op
  EXPECT_EQ(fused_opcode_for_op("matmul"), std::nullopt);
}

TEST(FusedProgram, LoopNestMergesDimensionsThatEveryInputWalksAlike) {
  // Same shapes: one flat dimension.
  FusedLoopNest nest = fused_loop_nest({{2, 3, 4}, {2, 3, 4}}, {2, 3, 4});
  EXPECT_EQ(nest.dims, (Shape{24}));
  EXPECT_EQ(nest.strides, (std::vector<std::vector<std::int64_t>>{{1}, {1}}));
  // A bias over the last axis: rows of 4.
  nest = fused_loop_nest({{2, 3, 4}, {4}}, {2, 3, 4});
  EXPECT_EQ(nest.dims, (Shape{6, 4}));
  EXPECT_EQ(nest.strides, (std::vector<std::vector<std::int64_t>>{{4, 1}, {0, 1}}));
  // A [3,1] operand: broadcast on the outer and inner axes.
  nest = fused_loop_nest({{2, 3, 4}, {3, 1}}, {2, 3, 4});
  EXPECT_EQ(nest.dims, (Shape{2, 3, 4}));
  EXPECT_EQ(nest.strides, (std::vector<std::vector<std::int64_t>>{{12, 4, 1}, {0, 1, 0}}));
  // Dimensions of extent 1 vanish; a scalar output is one element.
  nest = fused_loop_nest({{2, 1, 4}, {1, 1, 4}}, {2, 1, 4});
  EXPECT_EQ(nest.dims, (Shape{2, 4}));
  EXPECT_EQ(nest.strides, (std::vector<std::vector<std::int64_t>>{{4, 1}, {0, 1}}));
  nest = fused_loop_nest({{}, {1, 1}}, {1, 1});
  EXPECT_EQ(nest.dims, (Shape{1}));
}

}  // namespace
}  // namespace websd::graph
