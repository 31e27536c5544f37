// Dead-code elimination drops exactly the nodes and weights that do not reach an output, reports
// the dropped weights by name, and leaves live graphs unchanged.
#include "passes/dead_code_elimination.h"

#include <gtest/gtest.h>

#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "graph/printer.h"
#include "models/graphs/sd_graphs.h"
#include "pass_test_support.h"
#include "passes/verify.h"

namespace websd::passes {
namespace {

using graph::Function;
using graph::FunctionBuilder;
using graph::ValueId;

TEST(DeadCodeElimination, DropsUnreachableNodesAndUnusedWeights) {
  Function function("f");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {4}});
  b.input("unused_input", {DType::kF32, {2}});
  const ValueId scale = b.weight("scale", {4});
  const ValueId stale = b.weight("stale.bias", {4});
  const ValueId dead_only = b.weight("dead.only", {4});
  const ValueId live = b.mul(x, scale);
  const ValueId dead = b.op("exp", {b.add(live, stale)});  // reads a live value but feeds nothing
  b.op("tanh", {b.sub(dead, dead_only)});
  const ValueId out = b.op("sigmoid", {live});
  function.set_outputs({out, live});

  const DeadCodeResult result = eliminate_dead_code(function);
  EXPECT_EQ(result.removed_nodes, 4u);
  EXPECT_EQ(result.removed_weights, (std::vector<std::string>{"stale.bias", "dead.only"}));
  const Function& kept = result.function;
  EXPECT_NO_THROW(verify(kept));
  EXPECT_EQ(kept.inputs().size(), 2u) << "inputs are the signature and stay";
  ASSERT_EQ(kept.weights().size(), 1u);
  EXPECT_EQ(kept.value(kept.weights()[0]).name, "scale");
  ASSERT_EQ(kept.nodes().size(), 2u);
  EXPECT_EQ(kept.nodes()[0].op->name, "mul");
  EXPECT_EQ(kept.nodes()[1].op->name, "sigmoid");
  ASSERT_EQ(kept.outputs().size(), 2u);
  EXPECT_EQ(kept.value(kept.outputs()[0]).node, 1);
  EXPECT_EQ(kept.value(kept.outputs()[1]).node, 0);
}

TEST(DeadCodeElimination, OutputThatIsAnInputLeavesNoNodes) {
  Function function("passthrough");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {3}});
  b.op("exp", {b.add(x, b.weight("w", {3}))});
  function.set_outputs({x});
  const DeadCodeResult result = eliminate_dead_code(function);
  EXPECT_TRUE(result.function.nodes().empty());
  EXPECT_EQ(result.removed_nodes, 2u);
  EXPECT_EQ(result.removed_weights, std::vector<std::string>{"w"});
  EXPECT_EQ(result.function.outputs(), std::vector<ValueId>{0});
}

TEST(DeadCodeElimination, LeavesALiveGraphAsItWas) {
  const Function small = test::small_function();
  const DeadCodeResult small_result = eliminate_dead_code(small);
  EXPECT_EQ(graph::print_function(small_result.function), graph::print_function(small));

  // The UNet as built has no dead code and reads every weight of its parameter list. (Its text
  // differs only in value numbering: the builder interleaves weights with nodes.)
  const Function unet = unet_graph(test::tiny_unet_config(), 2, 16, 16);
  const DeadCodeResult result = eliminate_dead_code(unet);
  EXPECT_EQ(result.removed_nodes, 0u);
  EXPECT_TRUE(result.removed_weights.empty());
  ASSERT_EQ(result.function.nodes().size(), unet.nodes().size());
  for (std::size_t i = 0; i < unet.nodes().size(); ++i) {
    EXPECT_EQ(result.function.nodes()[i].op->name, unet.nodes()[i].op->name) << i;
  }
  ASSERT_EQ(result.function.weights().size(), unet.weights().size());
  for (std::size_t i = 0; i < unet.weights().size(); ++i) {
    EXPECT_EQ(result.function.value(result.function.weights()[i]).name, unet.value(unet.weights()[i]).name) << i;
  }
}

TEST(DeadCodeElimination, ReportsACheckpointWeightTheGraphDoesNotRead) {
  Function unet = unet_graph(test::tiny_unet_config(), 1, 8, 8);
  unet.add_weight("conv_extra.weight", {DType::kF32, {4, 4, 1, 1}});
  const DeadCodeResult result = eliminate_dead_code(unet);
  EXPECT_EQ(result.removed_weights, std::vector<std::string>{"conv_extra.weight"});
  EXPECT_EQ(result.function.weights().size(), unet.weights().size() - 1);
}

}  // namespace
}  // namespace websd::passes
