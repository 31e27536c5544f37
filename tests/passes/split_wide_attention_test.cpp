// split_wide_attention: an attention whose head the target's kernel cannot take becomes matmul,
// scale, softmax, permute and matmul computing the same values (the CPU reference executor runs
// both forms); heads that fit and causal attention are left alone.
#include "passes/split_wide_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/function_builder.h"
#include "pass_test_support.h"
#include "passes/verify.h"
#include "targets/cpu/reference/cpu_executor.h"

namespace websd::passes {
namespace {

graph::Function one_attention(std::int64_t head_dim, bool causal) {
  graph::Function function("a");
  graph::FunctionBuilder b(function);
  const TensorType type{DType::kF32, {1, 2, 24, head_dim}};
  const auto q = b.input("q", type), k = b.input("k", type), v = b.input("v", type);
  function.set_outputs({b.op("attention", {q, k, v},
                             {{"scale", 1.0 / std::sqrt(static_cast<double>(head_dim))},
                              {"causal", std::int64_t{causal ? 1 : 0}}})});
  return function;
}

const auto kFitsUpTo64 = [](std::int64_t d, std::int64_t dv) { return d <= 64 && dv <= 64; };

TEST(SplitWideAttention, AWideHeadBecomesMatmulsWithTheSameValues) {
  const graph::Function wide = one_attention(96, false);
  const graph::Function split = split_wide_attention(wide, kFitsUpTo64);
  verify(split);
  EXPECT_EQ(test::count_op(split, "attention"), 0u);
  EXPECT_EQ(test::count_op(split, "matmul"), 2u);
  EXPECT_EQ(test::count_op(split, "softmax"), 1u);
  EXPECT_EQ(test::count_op(split, "permute"), 1u);
  std::vector<cpu::CpuTensor> inputs;
  std::mt19937 engine(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int i = 0; i < 3; ++i) {
    cpu::CpuTensor tensor = cpu::CpuTensor::allocate({DType::kF32, {1, 2, 24, 96}});
    for (std::int64_t e = 0; e < tensor.numel(); ++e) tensor.fdata()[e] = normal(engine);
    inputs.push_back(tensor);
  }
  cpu::CpuExecutor before(wide, false), after(split, false);
  const auto expected = before.run(inputs);
  const auto actual = after.run(inputs);
  ASSERT_EQ(actual.size(), 1u);
  double worst = 0;
  for (std::int64_t e = 0; e < expected[0].numel(); ++e) {
    worst = std::max(worst, static_cast<double>(std::fabs(actual[0].fdata()[e] - expected[0].fdata()[e])));
  }
  EXPECT_LT(worst, 1e-5);
}

TEST(SplitWideAttention, HeadsThatFitAndCausalAttentionAreLeftAlone) {
  EXPECT_EQ(test::count_op(split_wide_attention(one_attention(64, false), kFitsUpTo64), "attention"), 1u);
  EXPECT_EQ(test::count_op(split_wide_attention(one_attention(96, true), kFitsUpTo64), "attention"), 1u);
}

}  // namespace
}  // namespace websd::passes
