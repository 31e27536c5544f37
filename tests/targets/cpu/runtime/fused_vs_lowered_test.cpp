// The CPU's fused kernels for composite ops agree with the composites' primitive decompositions.
#include <gtest/gtest.h>

#include "targets/cpu/reference/cpu_executor.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "cpu_test_util.h"
#include "graph/function_builder.h"
#include "passes/lower_composites.h"

namespace websd::cpu {
namespace {

struct Case {
  const char* op;
  std::vector<Shape> input_shapes;
  Attrs attrs;
};

class FusedVsLowered : public ::testing::TestWithParam<Case> {};

TEST_P(FusedVsLowered, Agree) {
  const Case& c = GetParam();
  graph::Function function(c.op);
  graph::FunctionBuilder b(function);
  std::vector<graph::ValueId> inputs;
  std::vector<CpuTensor> values;
  for (std::size_t i = 0; i < c.input_shapes.size(); ++i) {
    inputs.push_back(b.input(std::string("x").append(std::to_string(i)), {DType::kF32, c.input_shapes[i]}));
    values.push_back(test::random_tensor(c.input_shapes[i], 100 + static_cast<std::uint32_t>(i)));
  }
  function.set_outputs({b.op(c.op, inputs, c.attrs)});
  ASSERT_TRUE(cpu_supports(c.op)) << "no fused CPU kernel to compare";
  CpuExecutor fused(function);
  CpuExecutor lowered(passes::lower_composites(function, [](const std::string&) { return false; }));
  fused.bind_weights(nullptr);
  lowered.bind_weights(nullptr);
  const auto expected = lowered.run(values)[0];
  const auto actual = fused.run(values)[0];
  EXPECT_LT(test::relative_l2(*actual.f32, *expected.f32), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Composites, FusedVsLowered,
    ::testing::Values(Case{"layer_norm", {{2, 7, 16}, {16}, {16}}, {{"eps", 1e-5}}},
                      Case{"group_norm", {{2, 8, 5, 3}, {8}, {8}}, {{"groups", std::int64_t{4}}, {"eps", 1e-6}}},
                      Case{"linear", {{3, 5, 16}, {7, 16}, {7}}, {}},
                      Case{"linear", {{4, 16}, {7, 16}}, {}},
                      Case{"quick_gelu", {{3, 33}}, {}},
                      Case{"attention", {{2, 3, 300, 8}, {2, 3, 77, 8}, {2, 3, 77, 5}}, {{"scale", 0.35}}},
                      Case{"attention", {{1, 2, 10, 4}, {1, 2, 10, 4}, {1, 2, 10, 4}}, {{"scale", 0.5}}},
                      Case{"attention", {{2, 2, 77, 4}, {2, 2, 77, 4}, {2, 2, 77, 4}},
                           {{"scale", 0.5}, {"causal", std::int64_t{1}}}}),
    [](const auto& info) { return std::string(info.param.op) + std::to_string(info.index); });

}  // namespace
}  // namespace websd::cpu
