// passes::verify accepts what the builders produce and names the function, node, op and problem of
// every kind of damage a rewriting pass or an IR reader could do (made with Function::from_parts).
#include "passes/verify.h"

#include <gtest/gtest.h>

#include "graph/module.h"
#include "graph/op_registry.h"
#include "models/graphs/sd_graphs.h"
#include "pass_test_support.h"
#include "passes/lower_composites.h"

namespace websd::passes {
namespace {

using graph::Function;
using graph::ValueId;

// The raw parts of a function, to damage one of them and reassemble.
struct Parts {
  std::string symbol;
  std::vector<graph::Value> values;
  std::vector<graph::Node> nodes;
  std::vector<ValueId> inputs, weights, outputs;

  explicit Parts(const Function& f)
      : symbol(f.symbol()),
        values(f.values()),
        nodes(f.nodes()),
        inputs(f.inputs()),
        weights(f.weights()),
        outputs(f.outputs()) {}
  Function build() const { return Function::from_parts(symbol, values, nodes, inputs, weights, outputs); }
};

// small_function(): %0 x, %1 w, node 0 add -> %2, node 1 exp -> %3, node 2 mul -> %4.
Parts small_parts() { return Parts(test::small_function()); }

void expect_rejected(const Parts& parts, const std::vector<std::string>& needles) {
  const Function function = parts.build();
  std::vector<std::string> all = {"[verify]"};
  all.insert(all.end(), needles.begin(), needles.end());
  test::expect_error_mentions([&] { verify(function); }, all);
}

TEST(Verify, AcceptsTheNetworksAsBuiltAndLowered) {
  const Function unet = unet_graph(test::tiny_unet_config(), 2, 16, 16);
  EXPECT_NO_THROW(verify(unet));
  EXPECT_NO_THROW(verify(lower_composites(unet, [](const std::string&) { return false; })));
  EXPECT_NO_THROW(verify(test::small_function()));
  EXPECT_NO_THROW(verify(small_parts().build()));  // reassembly alone changes nothing
}

TEST(Verify, ValueTypeDisagreeingWithInference) {
  Parts parts = small_parts();
  parts.values[3].type.shape = {2, 4};
  expect_rejected(parts, {"function 'f'", "node 1 (exp)", "%3", "f32[2,4]", "inference gives f32[2,3]"});
  parts = small_parts();
  parts.values[4].type.dtype = DType::kF16;
  expect_rejected(parts, {"node 2 (mul)", "f16[2,3]"});
}

TEST(Verify, InputsMustBeDefinedEarlier) {
  Parts parts = small_parts();
  parts.nodes[1].inputs = {4};  // exp reads the mul's output, defined by node 2
  expect_rejected(parts, {"node 1 (exp)", "input %4", "before the node that defines it"});
  parts = small_parts();
  parts.nodes[0].inputs = {0, 99};
  expect_rejected(parts, {"node 0 (add)", "input %99 does not exist"});
  parts = small_parts();
  parts.nodes[0].inputs = {0, -1};
  expect_rejected(parts, {"node 0 (add)", "input %-1 does not exist"});
}

TEST(Verify, ArityAndOutputsOfNodes) {
  Parts parts = small_parts();
  parts.nodes[0].inputs = {0};
  expect_rejected(parts, {"node 0 (add)", "has 1 inputs, the op takes 2..2"});
  parts = small_parts();
  parts.nodes[2].outputs = {3};  // claims the exp's value as its own
  expect_rejected(parts, {"node 2 (mul)", "output %3"});
  parts = small_parts();
  parts.values[4].node = 0;
  expect_rejected(parts, {"node 2 (mul)", "does not name this node as its producer"});
}

TEST(Verify, AttributesThatNoLongerInfer) {
  Parts parts = small_parts();
  parts.nodes[1] = {&graph::op_lookup("reshape"), {2}, {{"shape", Shape{5}}}, {3}};
  expect_rejected(parts, {"node 1 (reshape)", "type inference fails", "does not hold 6 elements"});
}

TEST(Verify, OpsMustBeTheRegisteredOnes) {
  graph::OpDef impostor = graph::op_lookup("exp");
  Parts parts = small_parts();
  parts.nodes[1].op = &impostor;
  expect_rejected(parts, {"node 1 (exp)", "not the registered definition"});
  impostor.name = "frobnicate";
  expect_rejected(parts, {"node 1 (frobnicate)", "not registered"});
}

TEST(Verify, OutputsMustExist) {
  Parts parts = small_parts();
  parts.outputs = {4, 17};
  expect_rejected(parts, {"function 'f'", "output %17: does not exist"});
  parts.outputs = {};
  expect_rejected(parts, {"function 'f'", "must return something"});
}

TEST(Verify, NamesAndSymbol) {
  Parts parts = small_parts();
  parts.symbol = "";
  expect_rejected(parts, {"empty symbol"});

  graph::Function two_inputs("g");
  const ValueId a = two_inputs.add_input("a", {DType::kF32, {2}});
  const ValueId b = two_inputs.add_input("b", {DType::kF32, {2}});
  two_inputs.set_outputs({two_inputs.add_node("add", {a, b})[0]});
  parts = Parts(two_inputs);
  parts.values[1].name = "a";
  expect_rejected(parts, {"function 'g'", "input %1", "name 'a' is used twice"});
  parts.values[1].name = "";
  expect_rejected(parts, {"input %1", "empty name"});

  graph::Function two_weights("h");
  const ValueId u = two_weights.add_weight("u", {DType::kF32, {2}});
  const ValueId v = two_weights.add_weight("v", {DType::kF32, {2}});
  two_weights.set_outputs({two_weights.add_node("sub", {u, v})[0]});
  parts = Parts(two_weights);
  parts.values[0].name = "v";
  expect_rejected(parts, {"function 'h'", "weight %1", "name 'v' is used twice"});
}

TEST(Verify, ParameterListsMatchValueKinds) {
  Parts parts = small_parts();
  parts.weights = {};  // %1 is still a weight, now unbound
  expect_rejected(parts, {"value %1", "missing from the weight list"});
  parts = small_parts();
  parts.inputs = {0, 1};  // %1 is a weight, not an input
  expect_rejected(parts, {"input %1", "is not one"});
  parts = small_parts();
  parts.nodes.pop_back();  // %4 is left without a producer
  parts.outputs = {3};
  expect_rejected(parts, {"value %4", "produced by no node"});
}

TEST(Verify, ModulesVerifyEveryFunction) {
  graph::Module module;
  module.add_function(test::small_function(), "small.mod");
  Parts parts(unet_graph(test::tiny_unet_config(), 1, 8, 8));
  EXPECT_NO_THROW(verify(module));
  parts.values.back().type.shape[0] = 3;
  module.add_function(parts.build(), "unet.mod");
  const auto last_node = std::to_string(parts.nodes.size() - 1);
  expect_rejected(parts, {"function 'unet'", "node " + last_node});
  test::expect_error_mentions([&] { verify(module); }, {"[verify]", "function 'unet'", "node " + last_node});
}

}  // namespace
}  // namespace websd::passes
