// ArenaExecutor (cpu/arena_executor.h) on a small lowered function: the same outputs as the graph
// executor, outputs that outlive the next run, its errors for wrong inputs, unbound weights and
// missing kernels, a released arena; and what lower_to_launch_list (passes/launch_lowering.h)
// makes of reshapes (views, no launch) and of a wrong weight count.
#include "cpu/arena_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "cpu/cpu_executor.h"
#include "cpu_test_util.h"
#include "graph/op_registry.h"
#include "passes/launch_lowering.h"
#include "passes/memory_plan.h"
#include "support/error_text.h"
#include "support/launch_test_function.h"

namespace websd::cpu {
namespace {

runtime::LaunchList lower(const graph::Function& function) {
  return passes::lower_to_launch_list(function, passes::plan_memory(function), {{"w", "", {DType::kF32, {3}}}});
}

CpuTensor tensor_of(const TensorType& type, const std::vector<float>& values) {
  CpuTensor tensor = CpuTensor::allocate(type);
  EXPECT_EQ(static_cast<std::size_t>(tensor.numel()), values.size());
  std::copy(values.begin(), values.end(), tensor.fdata());
  return tensor;
}

std::vector<float> values_of(const CpuTensor& tensor) { return {tensor.fdata(), tensor.fdata() + tensor.numel()}; }

void bind_test_weight(ArenaExecutor& executor) {
  executor.bind_weights([](const runtime::LaunchWeight& weight) {
    EXPECT_EQ(weight.name, "w");
    return tensor_of(weight.type, websd::test::launch_test_weight());
  });
}

std::vector<CpuTensor> graph_executor_outputs(const graph::Function& function, const CpuTensor& x) {
  CpuExecutor executor(function);
  executor.bind_weights([](const std::string& name, const TensorType&, const WeightPacking*) {
    EXPECT_EQ(name, "w");
    return std::make_shared<std::vector<float>>(websd::test::launch_test_weight());
  });
  return executor.run({x});
}

using websd::test::error_of;

const TensorType kInputType{DType::kF32, {2, 3}};
const std::vector<float> kInputA = {0.0f, 1.0f, -2.0f, 3.5f, 4.0f, -0.25f};
const std::vector<float> kInputB = {-1.0f, 0.5f, 2.0f, -3.0f, 0.75f, 6.0f};

void expect_matches_graph_executor(const std::vector<CpuTensor>& outputs, const graph::Function& function,
                                   const std::vector<float>& input) {
  const auto expected = graph_executor_outputs(function, tensor_of(kInputType, input));
  ASSERT_EQ(outputs.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_EQ(outputs[i].type, expected[i].type);
    const auto actual_values = values_of(outputs[i]);
    const auto expected_values = values_of(expected[i]);
    ASSERT_EQ(actual_values.size(), expected_values.size());
    for (std::size_t k = 0; k < expected_values.size(); ++k) EXPECT_FLOAT_EQ(actual_values[k], expected_values[k]);
  }
}

TEST(LaunchLowering, ReshapesBecomeViewsWithoutALaunch) {
  const auto f = websd::test::launch_test_function();
  const runtime::LaunchList list = lower(f.function);
  std::size_t reshapes = 0;
  for (const auto& node : f.function.nodes()) reshapes += node.op->name == "reshape" ? 1 : 0;
  ASSERT_EQ(reshapes, 2u);
  EXPECT_EQ(list.launches.size(), f.function.nodes().size() - reshapes);
  for (const auto& launch : list.launches) {
    EXPECT_NE(launch.op, "reshape");
    EXPECT_NE(launch.output, f.view);
    EXPECT_NE(launch.output, f.input_view);
  }
  // A view of an intermediate shares its buffer's offset; a view of the input stays the input.
  const runtime::LaunchValue& view = list.values[f.view];
  EXPECT_EQ(view.placement, runtime::Placement::kArena);
  EXPECT_EQ(view.view_of, f.product);
  EXPECT_EQ(view.offset, list.values[f.product].offset);
  EXPECT_EQ(view.type.shape, (Shape{3, 2}));
  EXPECT_EQ(list.values[f.product].view_of, -1);
  EXPECT_EQ(list.values[f.input_view].placement, runtime::Placement::kInput);
  EXPECT_EQ(list.values[f.input_view].index, 0);
  EXPECT_EQ(list.values[f.input_view].view_of, -1);
  EXPECT_EQ(list.values[f.w].placement, runtime::Placement::kWeight);
  EXPECT_EQ(list.values[f.w].index, 0);
  EXPECT_EQ(list.input_names, (std::vector<std::string>{"x"}));
  EXPECT_EQ(list.outputs, (std::vector<std::int32_t>{f.result, f.view}));
}

TEST(LaunchLowering, AWrongWeightCountIsAnError) {
  const auto f = websd::test::launch_test_function();
  const std::string message =
      error_of([&] { passes::lower_to_launch_list(f.function, passes::plan_memory(f.function), {}); });
  EXPECT_NE(message.find("small: 0 weight placements for 1 weights"), std::string::npos) << message;
}

TEST(ArenaExecutor, MatchesTheGraphExecutor) {
  const auto f = websd::test::launch_test_function();
  ArenaExecutor executor(lower(f.function), nullptr);
  bind_test_weight(executor);
  const auto outputs = executor.run({tensor_of(kInputType, kInputA)});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[1].type.shape, (Shape{3, 2}));
  expect_matches_graph_executor(outputs, f.function, kInputA);
  // One value by hand: x[1][2] * w[2] = -0.25 * 2 is view[2][1]; silu(-0.5) * 0.5 + x[1][2].
  const float v = -0.25f * 2.0f;
  EXPECT_FLOAT_EQ(outputs[1].fdata()[5], v);
  EXPECT_NEAR(outputs[0].fdata()[5], v / (1 + std::exp(-v)) * 0.5f - 0.25f, 1e-6);
}

TEST(ArenaExecutor, OutputsStayValidAfterTheNextRun) {
  const auto f = websd::test::launch_test_function();
  ArenaExecutor executor(lower(f.function), nullptr);
  bind_test_weight(executor);
  const auto first = executor.run({tensor_of(kInputType, kInputA)});
  const std::vector<float> first_result = values_of(first[0]), first_view = values_of(first[1]);
  const auto second = executor.run({tensor_of(kInputType, kInputB)});
  EXPECT_EQ(values_of(first[0]), first_result);
  EXPECT_EQ(values_of(first[1]), first_view);
  EXPECT_NE(values_of(second[0]), first_result);
  expect_matches_graph_executor(first, f.function, kInputA);
  expect_matches_graph_executor(second, f.function, kInputB);
}

TEST(ArenaExecutor, RunsAgainAfterTheArenaIsReleased) {
  const auto f = websd::test::launch_test_function();
  ArenaExecutor executor(lower(f.function), nullptr);
  EXPECT_GT(executor.arena_bytes(), 0);
  bind_test_weight(executor);
  const auto before = executor.run({tensor_of(kInputType, kInputA)});
  executor.release_arena();
  const auto after = executor.run({tensor_of(kInputType, kInputB)});
  expect_matches_graph_executor(after, f.function, kInputB);
  executor.release_arena();
  executor.release_arena();  // twice is harmless
  const auto again = executor.run({tensor_of(kInputType, kInputA)});
  EXPECT_EQ(values_of(again[0]), values_of(before[0]));
  EXPECT_EQ(values_of(again[1]), values_of(before[1]));
}

TEST(ArenaExecutor, WrongInputsAreErrors) {
  const auto f = websd::test::launch_test_function();
  ArenaExecutor executor(lower(f.function), nullptr);
  bind_test_weight(executor);
  EXPECT_NE(error_of([&] { executor.run({}); }).find("[cpu] small: expects 1 inputs, got 0"), std::string::npos);
  const CpuTensor x = tensor_of(kInputType, kInputA);
  EXPECT_NE(error_of([&] { executor.run({x, x}); }).find("expects 1 inputs, got 2"), std::string::npos);
  const std::string shape = error_of([&] { executor.run({tensor_of({DType::kF32, {3, 2}}, kInputA)}); });
  EXPECT_NE(shape.find("[cpu] small: input 'x' must be f32[2,3], got f32[3,2]"), std::string::npos) << shape;
  const std::string dtype = error_of([&] { executor.run({CpuTensor::allocate({DType::kI64, {2, 3}})}); });
  EXPECT_NE(dtype.find("input 'x' must be f32[2,3], got i64[2,3]"), std::string::npos) << dtype;
  // The executor still runs after refusing.
  expect_matches_graph_executor(executor.run({x}), f.function, kInputA);
}

TEST(ArenaExecutor, RunningWithoutWeightsIsAnError) {
  const auto f = websd::test::launch_test_function();
  ArenaExecutor executor(lower(f.function), nullptr);
  const CpuTensor x = tensor_of(kInputType, kInputA);
  EXPECT_NE(error_of([&] { executor.run({x}); }).find("[cpu] small: weights not bound"), std::string::npos);
  bind_test_weight(executor);
  EXPECT_EQ(executor.run({x}).size(), 2u);
  executor.release_weights();
  EXPECT_NE(error_of([&] { executor.run({x}); }).find("weights not bound"), std::string::npos);
}

TEST(ArenaExecutor, ALaunchWithoutAKernelFailsAtConstruction) {
  const auto f = websd::test::launch_test_function();
  runtime::LaunchList generated = lower(f.function);
  generated.launches[1].kernel = "fused_0";
  const std::string no_library = error_of([&] { ArenaExecutor executor(generated, nullptr); });
  EXPECT_NE(no_library.find("small: launch of 'silu' needs generated kernel 'fused_0' but no kernel library"),
            std::string::npos)
      << no_library;
  runtime::LaunchList unknown = lower(f.function);
  unknown.launches[1].op = "warp_drive";
  const std::string no_kernel = error_of([&] { ArenaExecutor executor(unknown, nullptr); });
  EXPECT_NE(no_kernel.find("launch of 'warp_drive': this runtime's CPU target has no such kernel"), std::string::npos)
      << no_kernel;
}

// Regression: the reader checks an arena value's extent by its declared dtype, so a value declared
// f16 (or i32) at the arena's end passed it, while this executor stores floats as f32 and would
// have written twice the declared bytes, past the arena.
TEST(ArenaExecutor, DtypesItDoesNotStoreNativelyAreRefusedAtLoad) {
  const auto f = websd::test::launch_test_function();
  for (const DType narrow : {DType::kF16, DType::kI32, DType::kBF16, DType::kU8}) {
    runtime::LaunchList edited = lower(f.function);
    auto arena_value = std::find_if(edited.values.begin(), edited.values.end(),
                                    [](const auto& value) { return value.placement == runtime::Placement::kArena; });
    ASSERT_NE(arena_value, edited.values.end());
    arena_value->type.dtype = narrow;
    const std::string error = error_of([&] { ArenaExecutor executor(edited, nullptr); });
    EXPECT_NE(error.find("is " + dtype_lower_name(narrow) + "; the CPU runtime stores only f32 and i64 values"),
              std::string::npos)
        << error;
  }
}

}  // namespace
}  // namespace websd::cpu
