// Every composite op lowers to primitives only, with the same output types.
#include <gtest/gtest.h>

#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "passes/lower_composites.h"

namespace websd::graph {
namespace {

TEST(CompositeOps, LowerToPrimitivesWithTheSameTypes) {
  Function function("f");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {2, 8, 4, 4}});
  const ValueId seq = b.input("seq", {DType::kF32, {2, 5, 8}});
  const ValueId q = b.input("q", {DType::kF32, {2, 2, 5, 4}});
  const ValueId t = b.input("t", {DType::kF32, {2}});
  const ValueId gamma = b.weight("g", {8});
  const ValueId beta = b.weight("b", {8});
  std::vector<ValueId> outputs = {
      b.op("group_norm", {x, gamma, beta}, {{"groups", std::int64_t{2}}, {"eps", 1e-6}}),
      b.op("layer_norm", {seq, gamma, beta}, {{"eps", 1e-5}}),
      b.op("quick_gelu", {seq}),
      b.op("geglu", {seq}),
      b.op("linear", {seq, b.weight("w", {3, 8}), b.weight("wb", {3})}),
      b.op("attention", {q, q, q}, {{"scale", 0.5}}),
      b.op("timestep_embedding", {t}, {{"dim", std::int64_t{8}}, {"flip_sin_to_cos", std::int64_t{1}}}),
  };
  function.set_outputs(outputs);
  const Function lowered = passes::lower_composites(function, [](const std::string&) { return false; });
  for (const auto& node : lowered.nodes()) EXPECT_FALSE(node.op->has_trait(kTraitComposite)) << node.op->name;
  ASSERT_EQ(lowered.outputs().size(), outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(lowered.value(lowered.outputs()[i]).type, function.value(outputs[i]).type) << i;
  }
  const Function kept = passes::lower_composites(function, [](const std::string& op) { return op == "attention"; });
  int attention_nodes = 0;
  for (const auto& node : kept.nodes()) attention_nodes += node.op->name == "attention";
  EXPECT_EQ(attention_nodes, 1);
}

TEST(CompositeOps, ComputeIsF32OrBf16WhereTheCpuMayTakeProductsInBf16) {
  for (const std::string op : {"linear", "attention"}) {
    for (const std::string compute : {"f32", "bf16", "f16"}) {
      Function function("f");
      FunctionBuilder b(function);
      const ValueId seq = b.input("seq", {DType::kF32, {2, 5, 8}});
      const ValueId q = b.input("q", {DType::kF32, {2, 2, 5, 4}});
      const auto build = [&] {
        if (op == "linear") b.op("linear", {seq, b.weight("w", {3, 8})}, {{"compute", compute}});
        if (op == "attention") b.op("attention", {q, q, q}, {{"scale", 0.5}, {"compute", compute}});
      };
      if (compute != "f16") {
        EXPECT_NO_THROW(build()) << op << " " << compute;
        continue;
      }
      try {
        build();
        ADD_FAILURE() << op << ": compute f16 accepted";
      } catch (const std::exception& error) {
        EXPECT_NE(std::string(error.what()).find("compute must be \"f32\" or \"bf16\", got \"f16\""), std::string::npos)
            << error.what();
      }
    }
  }
}

TEST(CompositeOps, WeightsAreHeldInF32OrF16WhereTheCpuMayHoldThemInF16) {
  for (const std::string weights : {"f32", "f16", "bf16"}) {
    Function function("f");
    FunctionBuilder b(function);
    const ValueId seq = b.input("seq", {DType::kF32, {2, 5, 8}});
    const auto build = [&] { b.op("linear", {seq, b.weight("w", {3, 8})}, {{"weights", weights}}); };
    if (weights != "bf16") {
      EXPECT_NO_THROW(build()) << weights;
      continue;
    }
    try {
      build();
      ADD_FAILURE() << "weights bf16 accepted";
    } catch (const std::exception& error) {
      EXPECT_NE(std::string(error.what()).find("weights must be \"f32\" or \"f16\", got \"bf16\""), std::string::npos)
          << error.what();
    }
  }
}

TEST(CompositeOps, EveryOpHasASummary) {
  for (const OpDef* op : op_list()) {
    EXPECT_FALSE(op->summary.empty()) << op->name;
    EXPECT_EQ(op->has_trait(kTraitComposite), op_decomposition(op->name) != nullptr) << op->name;
  }
}

}  // namespace
}  // namespace websd::graph
