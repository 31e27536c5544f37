// fuse_elementwise: which elementwise chains become one fused_elementwise node and which stay
// apart (shared intermediates, function outputs, smaller broadcast operands, non-elementwise ops),
// scalar constants as immediates, kernel names, and on whole networks (tiny UNet, VAE encoder with
// its clamp), after the CPU target's passes and with every composite lowered: every elementwise op
// is fused and the CPU executor's results do not change by a single bit.
#include "passes/fuse_elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "targets/cpu/reference/cpu_executor.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "models/graphs/sd_graphs.h"
#include "models/vae_config.h"
#include "pass_test_support.h"
#include "passes/channels_last.h"
#include "passes/fuse_conv_residual.h"
#include "passes/fuse_norm_activation.h"
#include "passes/lower_composites.h"
#include "passes/verify.h"
#include "support/fixtures.h"

namespace websd::passes {
namespace {

using graph::ValueId;

const graph::Node& only_fused(const graph::Function& function) {
  EXPECT_EQ(test::count_op(function, "fused_elementwise"), 1u);
  for (const graph::Node& node : function.nodes()) {
    if (node.op->name == "fused_elementwise") return node;
  }
  throw std::runtime_error("no fused node");
}

std::string program_of(const graph::Node& node) { return node.attrs.get_string("program", "test"); }

TEST(FuseElementwise, FusesAChainIntoOneNodeReadingEachOperandOnce) {
  // exp(x + w) * x: x is read twice by the chain but is one input of the fused node.
  const graph::Function result = fuse_elementwise(test::small_function());
  verify(result);
  ASSERT_EQ(result.nodes().size(), 1u);
  const graph::Node& node = result.nodes()[0];
  EXPECT_EQ(program_of(node), "in0 in1 add exp in0 mul");
  EXPECT_EQ(node.inputs, (std::vector<ValueId>{result.inputs()[0], result.weights()[0]}));
  EXPECT_EQ(node.attrs.get_string("kernel", "test"), "f_fused_elementwise_0");
  EXPECT_EQ(result.outputs()[0], node.outputs[0]);
}

TEST(FuseElementwise, SharedIntermediatesAndOutputsEndAGroup) {
  graph::Function function("g");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {4, 8}});
  const auto shared = b.op("silu", {b.add(x, x)});  // read twice below
  const auto product = b.mul(shared, b.op("exp", {shared}));
  const auto visible = b.op("tanh", {x});  // also a function output
  function.set_outputs({b.sub(product, visible), visible});
  const graph::Function result = fuse_elementwise(function);
  verify(result);
  ASSERT_EQ(test::count_op(result, "fused_elementwise"), 3u);
  EXPECT_EQ(result.nodes().size(), 3u);
  EXPECT_EQ(program_of(result.nodes()[0]), "in0 in0 add silu");
  EXPECT_EQ(program_of(result.nodes()[1]), "in0 tanh");  // its own group, being an output
  EXPECT_EQ(program_of(result.nodes()[2]), "in0 in0 exp mul in1 sub");
}

TEST(FuseElementwise, SmallerBroadcastOperandsAreComputedOnceApart) {
  graph::Function function("h");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 16, 8}});
  const auto bias = b.op("silu", {b.weight("t", {8})});  // [8]: not recomputed per element of x
  function.set_outputs({b.op("gelu", {b.add(x, bias)})});
  const graph::Function result = fuse_elementwise(function);
  verify(result);
  ASSERT_EQ(result.nodes().size(), 2u);
  EXPECT_EQ(program_of(result.nodes()[0]), "in0 silu");
  EXPECT_EQ(program_of(result.nodes()[1]), "in0 in1 add gelu");
  EXPECT_EQ(result.nodes()[1].inputs[1], result.nodes()[0].outputs[0]);
}

TEST(FuseElementwise, ScalarConstantsBecomeImmediatesWhereTheShapeAllows) {
  graph::Function function("s");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {3, 5}});
  const auto two = b.scalar(2.0);
  const auto scaled = b.op("clamp", {b.mul(x, two)}, {{"min", -1.0}, {"max", 1.0}});
  // A [1,1,1] constant raises the rank of what it touches: it must stay an operand.
  const auto wide = b.op("constant", {}, {{"values", std::vector<double>{0.5}}, {"shape", Shape{1, 1, 1}}});
  function.set_outputs({scaled, b.add(x, wide), b.reshape(two, {1})});
  const graph::Function result = fuse_elementwise(function);
  verify(result);
  ASSERT_EQ(test::count_op(result, "fused_elementwise"), 2u);
  // The 2.0 constant survives for the reshape, the [1,1,1] one as an operand.
  EXPECT_EQ(test::count_op(result, "constant"), 2u);
  std::vector<const graph::Node*> fused;
  for (const graph::Node& node : result.nodes()) {
    if (node.op->name == "fused_elementwise") fused.push_back(&node);
  }
  EXPECT_EQ(program_of(*fused[0]), "in0 c0 mul c1 max c2 min");
  EXPECT_EQ(fused[0]->attrs.get_floats("constants", "t"), (std::vector<double>{2.0, -1.0, 1.0}));
  EXPECT_EQ(fused[0]->inputs.size(), 1u);
  EXPECT_EQ(program_of(*fused[1]), "in0 in1 add");
  EXPECT_EQ(result.value(result.outputs()[1]).type.shape, (Shape{1, 3, 5}));

  // A constant read only by fused groups disappears.
  graph::Function lone("l");
  graph::FunctionBuilder lb(lone);
  lone.set_outputs({lb.op("exp", {lb.mul(lb.input("x", {DType::kF32, {4}}), lb.scalar(-1.0))})});
  const graph::Function folded = fuse_elementwise(lone);
  EXPECT_EQ(folded.nodes().size(), 1u);
  EXPECT_EQ(program_of(folded.nodes()[0]), "in0 c0 mul exp");
}

TEST(FuseElementwise, LeavesOtherOpsAloneAndNamesKernelsUniquely) {
  graph::Function function("vae.decode-1");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 4}});
  const auto h = b.matmul(b.op("silu", {x}), b.weight("w", {4, 4}));
  const auto soft = b.op("softmax", {b.add(h, x)}, {{"axis", std::int64_t{-1}}});
  const auto cast = b.op("cast", {b.op("neg", {soft})}, {{"dtype", std::string("F16")}});
  function.set_outputs({b.op("sqrt", {cast})});
  const graph::Function result = fuse_elementwise(function);
  verify(result);
  EXPECT_EQ(test::count_op(result, "matmul"), 1u);
  EXPECT_EQ(test::count_op(result, "softmax"), 1u);
  EXPECT_EQ(test::count_op(result, "cast"), 1u);
  EXPECT_EQ(test::count_op(result, "fused_elementwise"), 4u);  // silu, add, neg, sqrt (f16) apart
  std::vector<std::string> kernels;
  for (const graph::Node& node : result.nodes()) {
    if (node.op->name == "fused_elementwise") kernels.push_back(node.attrs.get_string("kernel", "t"));
  }
  EXPECT_EQ(kernels,
            (std::vector<std::string>{"vae_decode_1_fused_elementwise_0", "vae_decode_1_fused_elementwise_1",
                                      "vae_decode_1_fused_elementwise_2", "vae_decode_1_fused_elementwise_3"}));
}

TEST(FuseElementwise, RunningTwiceMergesNothingNewAndRenamesNothing) {
  const graph::Function once = fuse_elementwise(test::small_function());
  const graph::Function twice = fuse_elementwise(once);
  ASSERT_EQ(twice.nodes().size(), 1u);
  EXPECT_EQ(twice.nodes()[0].attrs.to_string(), once.nodes()[0].attrs.to_string());

  // Fused nodes written separately merge like their ops would.
  graph::Function function("m");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {6}});
  const auto inner = b.op(
      "fused_elementwise", {x},
      {{"program", std::string("in0 c0 mul")}, {"constants", std::vector<double>{3.0}}, {"kernel", std::string("a")}});
  function.set_outputs({b.op("fused_elementwise", {inner, x},
                             {{"program", std::string("in0 in1 add c0 max")},
                              {"constants", std::vector<double>{0.0}},
                              {"kernel", std::string("b")}})});
  const graph::Function result = fuse_elementwise(function);
  const graph::Node& merged = only_fused(result);
  EXPECT_EQ(program_of(merged), "in0 c0 mul in0 add c1 max");
  EXPECT_EQ(merged.attrs.get_floats("constants", "t"), (std::vector<double>{3.0, 0.0}));
}

TEST(FuseElementwise, AGroupNeverExceedsTheInputLimit) {
  graph::Function function("wide");
  graph::FunctionBuilder b(function);
  ValueId sum = b.input("x0", {DType::kF32, {3}});
  for (int i = 1; i < 150; ++i)
    sum = b.add(sum, b.input(std::string("x").append(std::to_string(i)), {DType::kF32, {3}}));
  function.set_outputs({sum});
  const graph::Function result = fuse_elementwise(function);
  verify(result);
  EXPECT_EQ(test::count_op(result, "add"), 0u);
  EXPECT_GE(test::count_op(result, "fused_elementwise"), 3u);
  for (const graph::Node& node : result.nodes()) EXPECT_LE(node.inputs.size(), 64u);
  // A target's smaller limit (WebGPU: 8 storage bindings, one for the output) holds the same way.
  const graph::Function capped = fuse_elementwise(function, 7);
  verify(capped);
  EXPECT_EQ(test::count_op(capped, "add"), 0u);
  EXPECT_GE(test::count_op(capped, "fused_elementwise"), 150u / 6);
  for (const graph::Node& node : capped.nodes()) EXPECT_LE(node.inputs.size(), 7u);
  test::expect_error_mentions([&] { fuse_elementwise(function, 1); }, {"max_inputs 1 is outside 2..64"});
}

// The CPU target's passes before fusion (as CpuExecutor runs them).
graph::Function cpu_passes(const graph::Function& function) {
  const graph::Function lowered =
      lower_composites(function, [](const std::string& op) { return cpu::cpu_supports(op); });
  return fuse_norm_activation(fuse_conv_residual(to_channels_last(lowered)));
}

// Deterministic small random weights per name, packed when the kernel asks.
cpu::WeightSource random_weights() {
  return [](const std::string& name, const TensorType& type, const cpu::WeightPacking* packing) {
    std::mt19937 engine(static_cast<std::uint32_t>(std::hash<std::string>()(name)));
    std::normal_distribution<float> normal(0.0f, 0.1f);
    std::vector<float> values(static_cast<std::size_t>(type.numel()));
    for (float& value : values) value = normal(engine);
    if (name.find("norm") != std::string::npos && name.find("weight") != std::string::npos) {
      for (float& value : values) value += 1.0f;  // norm scales near 1
    }
    return std::make_shared<std::vector<float>>(packing ? packing->pack(values) : values);
  };
}

cpu::CpuTensor random_input(const Shape& shape, std::uint32_t seed) {
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate({DType::kF32, shape});
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.fdata()[i] = normal(engine);
  return tensor;
}

// Fuses `prepared` and checks that every fusable op went into a fused node and that the CPU
// executor's outputs keep every bit; returns the fused function.
graph::Function expect_fusion_changes_nothing(const graph::Function& prepared,
                                              const std::vector<cpu::CpuTensor>& inputs) {
  const graph::Function fused = fuse_elementwise(prepared);
  verify(fused);
  for (const graph::Node& node : fused.nodes()) {
    EXPECT_TRUE(node.op->name == "fused_elementwise" || !node.op->has_trait(graph::kTraitElementwise) ||
                node.op->name == "cast")
        << node.op->name;
  }
  EXPECT_GT(test::count_op(fused, "fused_elementwise"), 0u);
  cpu::CpuExecutor before(prepared, false);
  cpu::CpuExecutor after(fused, false);
  before.bind_weights(random_weights());
  after.bind_weights(random_weights());
  const auto expected = before.run(inputs);
  const auto actual = after.run(inputs);
  EXPECT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].type, expected[i].type);
    std::size_t finite = 0, differing = 0;
    for (std::int64_t k = 0; k < actual[i].numel() && k < expected[i].numel(); ++k) {
      finite += std::isfinite(expected[i].fdata()[k]);
      differing += actual[i].fdata()[k] != expected[i].fdata()[k];
    }
    EXPECT_EQ(finite, static_cast<std::size_t>(expected[i].numel())) << prepared.symbol() << " output " << i;
    EXPECT_EQ(differing, 0u) << prepared.symbol() << " output " << i;
  }
  return fused;
}

// All composites lowered to primitives: norms, GEGLU and attention leave long elementwise chains.
graph::Function all_primitives(const graph::Function& function) {
  return lower_composites(function, [](const std::string&) { return false; });
}

TEST(FuseElementwise, TinyUNetGivesBitIdenticalResults) {
  const UNetConfig config = test::tiny_unet_config();
  const graph::Function unet = unet_graph(config, 2, 16, 16, 7);
  cpu::CpuTensor timestep = cpu::CpuTensor::allocate({DType::kF32, {2}});
  timestep.fdata()[0] = 321.0f;
  timestep.fdata()[1] = 17.0f;
  const std::vector<cpu::CpuTensor> inputs = {random_input({2, config.in_channels, 16, 16}, 1), timestep,
                                              random_input({2, 7, config.cross_attention_dim}, 2)};
  // After the CPU passes the remaining elementwise ops (residual adds, the time embedding's
  // activation) stand alone: each becomes a group of one.
  const graph::Function prepared = cpu_passes(unet);
  const graph::Function fused = expect_fusion_changes_nothing(prepared, inputs);
  EXPECT_EQ(fused.nodes().size(), prepared.nodes().size());
  // With every composite lowered, chains fuse and the function shrinks by hundreds of nodes.
  const graph::Function lowered = all_primitives(unet);
  const graph::Function chains = expect_fusion_changes_nothing(lowered, inputs);
  EXPECT_LT(chains.nodes().size() + 200, lowered.nodes().size());
}

TEST(FuseElementwise, TinyVaeEncoderWithItsClampGivesBitIdenticalResults) {
  const VaeConfig config = vae_config_read(test::fixture_path("tiny-sd15/model/vae/config.json"));
  const graph::Function encoder = vae_encode_graph(config, 1, 32, 24);
  const std::vector<cpu::CpuTensor> inputs = {random_input({1, 3, 32, 24}, 3)};
  const graph::Function fused = expect_fusion_changes_nothing(cpu_passes(encoder), inputs);
  bool clamp_fused = false;
  for (const graph::Node& node : fused.nodes()) {
    clamp_fused = clamp_fused || (node.op->name == "fused_elementwise" &&
                                  node.attrs.get_string("program", "t") == "in0 c0 max c1 min");
  }
  EXPECT_TRUE(clamp_fused);
  const graph::Function lowered = all_primitives(encoder);
  EXPECT_LT(expect_fusion_changes_nothing(lowered, inputs).nodes().size(), lowered.nodes().size());
}

}  // namespace
}  // namespace websd::passes
