// The CPU interpreter kernel of fused_elementwise against the unfused ops' kernels: every
// instruction, every broadcast pattern, chained programs over multi-threaded tiles, and
// degenerate outputs. Fusion must not change a single bit, so comparisons are exact.
#include <gtest/gtest.h>

#include <cmath>

#include "codegen_test_support.h"

namespace websd::test {
namespace {

using cpu::CpuTensor;

void expect_bitwise_equal(const CpuTensor& actual, const CpuTensor& expected, const std::string& what) {
  ASSERT_EQ(actual.type, expected.type) << what;
  EXPECT_EQ(expect_close(tensor_values(actual), tensor_values(expected), 0.0, what), 0u) << what;
}

Attrs program_attrs(const std::string& program, const std::vector<double>& constants = {}) {
  Attrs attrs{{"program", program}, {"kernel", std::string("k")}};
  if (!constants.empty()) attrs.set("constants", constants);
  return attrs;
}

TEST(FusedElementwiseKernel, EveryUnaryInstructionMatchesItsOpKernel) {
  const Shape shape = {3, 1037};  // rows longer than a vector, with a ragged tail
  const CpuTensor x = random_cpu_tensor(shape, 1, 3.0f);
  const CpuTensor positive = random_cpu_tensor(shape, 2, 3.0f, true);
  const TensorType type{DType::kF32, shape};
  for (const char* op :
       {"neg", "exp", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "silu", "gelu", "quick_gelu"}) {
    const std::string name = op;
    const CpuTensor& input = name == "sqrt" || name == "rsqrt" ? positive : x;
    const CpuTensor expected = run_cpu_kernel(op, {&input}, {}, type);
    const CpuTensor actual = run_cpu_kernel("fused_elementwise", {&input}, program_attrs("in0 " + name), type);
    expect_bitwise_equal(actual, expected, name);
  }
  const Attrs clamp{{"min", -0.5}, {"max", 1.25}};
  expect_bitwise_equal(
      run_cpu_kernel("fused_elementwise", {&x}, program_attrs("in0 c0 max c1 min", {-0.5, 1.25}), type),
      run_cpu_kernel("clamp", {&x}, clamp, type), "clamp");
}

TEST(FusedElementwiseKernel, BinaryInstructionsBroadcastLikeTheirOpKernels) {
  const std::vector<std::pair<Shape, Shape>> patterns = {
      {{5, 7, 9}, {5, 7, 9}}, {{5, 7, 9}, {9}},       {{5, 1, 9}, {7, 1}},    {{}, {5, 7, 9}},
      {{5, 7, 9}, {1}},       {{1, 7, 1}, {5, 1, 9}}, {{2, 3, 2000}, {3, 1}},  // rows longer than one tile
  };
  for (const auto& [shape_a, shape_b] : patterns) {
    const CpuTensor a = random_cpu_tensor(shape_a, 3);
    const CpuTensor b = random_cpu_tensor(shape_b, 4, 1.0f, true);
    Shape out_shape = shape_a.size() >= shape_b.size() ? shape_a : shape_b;
    for (std::size_t i = 0; i < out_shape.size(); ++i) {
      const std::size_t from_end = out_shape.size() - 1 - i;
      const auto extent = [&](const Shape& s) { return from_end < s.size() ? s[s.size() - 1 - from_end] : 1; };
      out_shape[i] = std::max(extent(shape_a), extent(shape_b));
    }
    const TensorType type{DType::kF32, out_shape};
    for (const char* op : {"add", "sub", "mul", "div"}) {
      const std::string what = std::string(op) + " " + shape_to_string(shape_a) + " " + shape_to_string(shape_b);
      expect_bitwise_equal(
          run_cpu_kernel("fused_elementwise", {&a, &b}, program_attrs(std::string("in0 in1 ") + op), type),
          run_cpu_kernel(op, {&a, &b}, {}, type), what);
    }
  }
}

TEST(FusedElementwiseKernel, MinAndMaxAreStdMinAndStdMax) {
  const CpuTensor a = random_cpu_tensor({300}, 5);
  const CpuTensor b = random_cpu_tensor({300}, 6);
  const TensorType type{DType::kF32, {300}};
  const CpuTensor low = run_cpu_kernel("fused_elementwise", {&a, &b}, program_attrs("in0 in1 min"), type);
  const CpuTensor high = run_cpu_kernel("fused_elementwise", {&a, &b}, program_attrs("in0 in1 max"), type);
  for (std::int64_t i = 0; i < 300; ++i) {
    EXPECT_EQ(low.fdata()[i], std::min(a.fdata()[i], b.fdata()[i]));
    EXPECT_EQ(high.fdata()[i], std::max(a.fdata()[i], b.fdata()[i]));
  }
}

// silu((x + bias) * 0.5) - gelu(x) / y over [4, 64, 1000] (threads, many tiles), step by step.
TEST(FusedElementwiseKernel, ChainedProgramEqualsTheOpsOneByOne) {
  const Shape shape = {4, 64, 1000};
  const TensorType type{DType::kF32, shape};
  const CpuTensor x = random_cpu_tensor(shape, 7);
  const CpuTensor bias = random_cpu_tensor({1000}, 8);
  const CpuTensor y = random_cpu_tensor({4, 1, 1}, 9, 1.0f, true);
  CpuTensor half = random_cpu_tensor({}, 10);
  half.fdata()[0] = 0.5f;
  const CpuTensor sum = run_cpu_kernel("add", {&x, &bias}, {}, type);
  const CpuTensor scaled = run_cpu_kernel("mul", {&sum, &half}, {}, type);
  const CpuTensor activated = run_cpu_kernel("silu", {&scaled}, {}, type);
  const CpuTensor gelu = run_cpu_kernel("gelu", {&x}, {}, type);
  const CpuTensor ratio = run_cpu_kernel("div", {&gelu, &y}, {}, type);
  const CpuTensor expected = run_cpu_kernel("sub", {&activated, &ratio}, {}, type);
  const CpuTensor actual = run_cpu_kernel("fused_elementwise", {&x, &bias, &y},
                                          program_attrs("in0 in1 add c0 mul silu in0 gelu in2 div sub", {0.5}), type);
  expect_bitwise_equal(actual, expected, "chain");
}

TEST(FusedElementwiseKernel, BroadcastOnlyResultsFillTheOutput) {
  const CpuTensor one = random_cpu_tensor({1}, 11);
  const CpuTensor big = random_cpu_tensor({3, 2100}, 12);
  const TensorType type{DType::kF32, {3, 2100}};
  const CpuTensor filled =
      run_cpu_kernel("fused_elementwise", {&big, &one}, program_attrs("in1 exp c0 add", {2.0}), type);
  const float expected = std::exp(one.fdata()[0]) + 2.0f;
  for (std::int64_t i = 0; i < filled.numel(); ++i) ASSERT_NEAR(filled.fdata()[i], expected, 1e-6f * expected) << i;
  const CpuTensor copied = run_cpu_kernel("fused_elementwise", {&big}, program_attrs("in0"), type);
  expect_bitwise_equal(copied, big, "identity");
}

TEST(FusedElementwiseKernel, EmptyOutputsAreFine) {
  for (const Shape& shape : {Shape{0, 4}, Shape{4, 0}}) {
    const CpuTensor empty = random_cpu_tensor(shape, 13);
    const CpuTensor result =
        run_cpu_kernel("fused_elementwise", {&empty}, program_attrs("in0 silu"), {DType::kF32, shape});
    EXPECT_EQ(result.numel(), 0);
  }
}

}  // namespace
}  // namespace websd::test
