// lower_to_launch_list with a target's node lowering (passes/launch_lowering.h): a node lowered to
// several launches in order, bindings chosen per launch, uniforms and dispatch carried, a
// workspace placed in one extra arena sized for the largest, and the lists reading back through
// the runtime's checks; mismatched lowerings are compiler errors.
#include "passes/launch_lowering.h"

#include <gtest/gtest.h>

#include "graph/function_builder.h"
#include "pass_test_support.h"
#include "passes/memory_plan.h"
#include "runtime/launch_list.h"

namespace websd::passes {
namespace {

graph::Function two_exps() {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {64}});
  function.set_outputs({b.op("exp", {b.op("exp", {x})})});
  return function;
}

runtime::Kernel file_kernel(const std::string& entry, std::vector<runtime::Access> bindings,
                            std::int64_t uniform_bytes) {
  runtime::Kernel kernel;
  kernel.name = "k:" + entry;
  kernel.source = "file";
  kernel.file = "kernels/k.wgsl";
  kernel.entry = entry;
  kernel.bindings = std::move(bindings);
  kernel.uniform_bytes = uniform_bytes;
  return kernel;
}

// Each exp as two launches: "stats" writes a workspace of `bytes`, "apply" reads x and it, writes out.
NodeLowering two_pass(std::int64_t first_bytes, std::int64_t second_bytes) {
  return [=](const graph::Function& function, const graph::Node& node) {
    const std::int64_t bytes = &node == &function.nodes()[0] ? first_bytes : second_bytes;
    NodeLaunch stats;
    stats.kernel = file_kernel("stats", {runtime::Access::kRead, runtime::Access::kWrite}, 16);
    stats.operands = {0, kWorkspaceOperand};
    stats.uniforms.assign(16, std::byte{7});
    stats.dispatch = {3, 2, 1};
    stats.workspace_bytes = bytes;
    NodeLaunch apply;
    apply.kernel = file_kernel("apply", {runtime::Access::kRead, runtime::Access::kRead, runtime::Access::kWrite}, 0);
    apply.operands = {0, kWorkspaceOperand, 1};
    apply.dispatch = {5, 1, 1};
    return std::vector<NodeLaunch>{stats, apply};
  };
}

TEST(LaunchLowering, ANodeMayBecomeSeveralLaunchesSharingAWorkspaceArena) {
  const graph::Function function = two_exps();
  const MemoryPlan plan = plan_memory(function, {256, 1 << 20});
  const runtime::LaunchList list = lower_to_launch_list(function, plan, {}, two_pass(100, 1000));
  ASSERT_EQ(list.launches.size(), 4u);
  ASSERT_EQ(list.kernels.size(), 2u);  // stats and apply, each once
  EXPECT_EQ(list.kernel_of(list.launches[0]).entry, "stats");
  EXPECT_EQ(list.kernel_of(list.launches[1]).entry, "apply");
  EXPECT_EQ(list.launches[0].dispatch, (std::array<std::int64_t, 3>{3, 2, 1}));
  EXPECT_EQ(list.launches[0].uniforms, std::vector<std::byte>(16, std::byte{7}));
  EXPECT_TRUE(list.launches[1].uniforms.empty());
  // One workspace arena after the plan's, as large as the largest workspace (aligned).
  ASSERT_EQ(list.memory.arenas.size(), plan.arenas.size() + 1);
  EXPECT_EQ(list.memory.arenas.back(), 1024);
  const auto first_workspace = list.launches[0].bindings[1].value;
  const auto second_workspace = list.launches[2].bindings[1].value;
  EXPECT_NE(first_workspace, second_workspace);
  EXPECT_EQ(list.values[first_workspace].arena, static_cast<std::int32_t>(plan.arenas.size()));
  EXPECT_EQ(list.values[first_workspace].type, (TensorType{DType::kF32, {25}}));
  EXPECT_EQ(list.values[second_workspace].type, (TensorType{DType::kF32, {250}}));
  EXPECT_EQ(list.launches[1].bindings[1].value, first_workspace);
  EXPECT_EQ(list.launches[1].bindings[0].value, function.nodes()[0].inputs[0]);
  EXPECT_EQ(list.launches[1].bindings[2].value, function.nodes()[0].outputs[0]);
  // The runtime's reader accepts it: every value written before it is read.
  const runtime::LaunchList back = runtime::launch_list_from_json(runtime::launch_list_to_json(list));
  EXPECT_EQ(back.launches.size(), 4u);
  EXPECT_EQ(back.memory.arenas, list.memory.arenas);
}

TEST(LaunchLowering, ALoweringThatDoesNotFitItsKernelIsACompilerError) {
  const graph::Function function = two_exps();
  const MemoryPlan plan = plan_memory(function);
  const auto lowering = [](NodeLaunch launch) {
    return [launch](const graph::Function&, const graph::Node&) { return std::vector<NodeLaunch>{launch}; };
  };
  NodeLaunch too_few;
  too_few.kernel = file_kernel("a", {runtime::Access::kRead, runtime::Access::kWrite}, 0);
  too_few.operands = {0};
  test::expect_error_mentions([&] { lower_to_launch_list(function, plan, {}, lowering(too_few)); },
                              {"kernel 'k:a' has 2 binding slots", "binding 1 operands"});
  NodeLaunch no_workspace;
  no_workspace.kernel = file_kernel("b", {runtime::Access::kRead, runtime::Access::kWrite}, 0);
  no_workspace.operands = {kWorkspaceOperand, 1};
  test::expect_error_mentions([&] { lower_to_launch_list(function, plan, {}, lowering(no_workspace)); },
                              {"kernel 'k:b' binds operand -1"});
  NodeLaunch wrong_uniforms;
  wrong_uniforms.kernel = file_kernel("c", {runtime::Access::kRead, runtime::Access::kWrite}, 16);
  test::expect_error_mentions([&] { lower_to_launch_list(function, plan, {}, lowering(wrong_uniforms)); },
                              {"packs 0 uniform bytes for its 16"});
}

// Two linears over one weight; `f16_first`/`f16_second`: whether each one's kernel reads it in f16.
runtime::LaunchList shared_weight_list(bool f16_first, bool f16_second, std::vector<int> f16_operands = {1}) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto w = b.weight("w", {8, 16});
  const auto h = b.op("linear", {b.input("x", {DType::kF32, {4, 16}}), w});
  function.set_outputs({b.op("linear", {b.op("pad", {h}, {{"pads", std::vector<std::int64_t>{0, 0, 0, 8}}}), w})});
  const MemoryPlan plan = plan_memory(function);
  const NodeLowering lowering = [&](const graph::Function& f, const graph::Node& node) {
    NodeLaunch launch = single_launch(node, builtin_kernel(node));
    const bool f16 = &node == &f.nodes()[0] ? f16_first : &node == &f.nodes()[2] && f16_second;
    if (f16) launch.f16_weights = f16_operands;
    return std::vector<NodeLaunch>{launch};
  };
  return lower_to_launch_list(function, plan, {{"model/w", "", {DType::kF32, {8, 16}}}}, lowering);
}

TEST(LaunchLowering, AWeightAKernelReadsInF16IsAnF16WeightOfTheList) {
  const runtime::LaunchList list = shared_weight_list(true, true);
  ASSERT_EQ(list.weights.size(), 1u);
  EXPECT_EQ(list.weights[0].type.dtype, DType::kF16);  // what the device holds
  for (const auto& value : list.values) {
    if (value.placement == runtime::Placement::kWeight) {
      EXPECT_EQ(value.type.dtype, DType::kF16);
    }
  }
  // Through JSON and the runtime's checks unchanged.
  const runtime::LaunchList read = runtime::launch_list_from_json(runtime::launch_list_to_json(list));
  EXPECT_EQ(read.weights[0].type.dtype, DType::kF16);
  EXPECT_EQ(shared_weight_list(false, false).weights[0].type.dtype, DType::kF32);
  test::expect_error_mentions([] { shared_weight_list(true, false); },
                              {"weight 'model/w' is read as f16 by one kernel and as f32 by kernel"});
  test::expect_error_mentions([] { shared_weight_list(true, true, {0}); },
                              {"reads operand 0 of an 'linear' node as an f16 weight; it is no weight"});
}

}  // namespace
}  // namespace websd::passes
