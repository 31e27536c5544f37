// merge_qkv: which linear nodes group and which do not, the merged weights' names and recipes, and,
// on hand-built functions and the tiny UNet, VAE decoder and CLIP graphs, that the merged function
// computes the same outputs on the CPU executor when its new weights are materialised from the
// original ones.
#include "passes/merge_qkv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "core/error.h"
#include "targets/cpu/reference/cpu_executor.h"
#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "models/clip_config.h"
#include "models/graphs/sd_graphs.h"
#include "models/model_params.h"
#include "models/param_init.h"
#include "models/vae_config.h"
#include "pass_test_support.h"
#include "passes/dead_code_elimination.h"
#include "passes/verify.h"
#include "support/fixtures.h"
#include "support/tensor_compare.h"

namespace websd::passes {
namespace {

using graph::Function;
using graph::ValueId;
using WeightValues = std::map<std::string, std::vector<float>>;

std::vector<std::string> weight_names(const Function& function) {
  std::vector<std::string> names;
  for (const auto id : function.weights()) names.push_back(function.value(id).name);
  return names;
}

bool has_weight(const Function& function, const std::string& name) {
  const auto names = weight_names(function);
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Uniform values in +-1/sqrt(last dim) for every weight of a hand-built function.
WeightValues random_values(const Function& function, std::uint32_t seed) {
  WeightValues values;
  std::mt19937 engine(seed);
  for (const auto id : function.weights()) {
    const auto& type = function.value(id).type;
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto& data = values[function.value(id).name];
    data.resize(static_cast<std::size_t>(type.numel()));
    for (auto& v : data) v = uniform(engine) / std::sqrt(static_cast<float>(type.shape.back()));
  }
  return values;
}

// The network's deterministic random parameters (param_init_f16, upcast), by name.
WeightValues param_values(const std::vector<ModelParam>& params, std::uint64_t seed) {
  WeightValues values;
  for (const auto& param : params) {
    const auto count = static_cast<std::size_t>(shape_numel(param.spec.shape));
    std::vector<std::byte> half(2 * count);
    param_init_f16(param, seed, "test", half);
    auto& data = values[param.spec.name];
    data.resize(count);
    convert_to_f32(half.data(), DType::kF16, count, data.data());
  }
  return values;
}

// `originals` plus the recipes' weights materialised from them.
WeightValues with_recipes(WeightValues originals, const std::vector<WeightRecipe>& recipes) {
  for (const auto& recipe : recipes) {
    originals[recipe.name] = weight_recipe_materialize(recipe, [&](const std::string& name) {
      const auto it = originals.find(name);
      if (it == originals.end()) throw Error("test", "no source tensor '" + name + "'");
      return it->second;
    });
  }
  return originals;
}

cpu::WeightSource weight_source(const WeightValues& values) {
  const auto held = std::make_shared<const WeightValues>(values);
  return [held](const std::string& name, const TensorType& type, const cpu::WeightPacking* packing) {
    const auto it = held->find(name);
    EXPECT_NE(it, held->end()) << "the function reads weight '" << name << "' which nobody materialised";
    if (it == held->end()) return std::shared_ptr<std::vector<float>>();
    EXPECT_EQ(static_cast<std::int64_t>(it->second.size()), type.numel()) << name;
    auto storage = std::make_shared<std::vector<float>>(it->second);
    return packing ? std::make_shared<std::vector<float>>(packing->pack(*storage)) : storage;
  };
}

cpu::CpuTensor random_input(const TensorType& type, std::uint32_t seed) {
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate(type);
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::generate(tensor.fdata(), tensor.fdata() + tensor.numel(), [&] { return normal(engine); });
  return tensor;
}

std::vector<cpu::CpuTensor> run(const Function& function, const WeightValues& values,
                                const std::vector<cpu::CpuTensor>& inputs) {
  cpu::CpuExecutor executor(function);
  executor.bind_weights(weight_source(values));
  return executor.run(inputs);
}

// Runs `function` with `originals` and its merged form with the materialised weights; every output
// must agree within `tolerance` relative L2. Returns the merge result.
MergeQkvResult expect_merge_preserves_outputs(const Function& function, const WeightValues& originals,
                                              const std::vector<cpu::CpuTensor>& inputs, double tolerance = 1e-5) {
  MergeQkvResult merged = merge_qkv(function);
  verify(merged.function);
  const auto expected = run(function, originals, inputs);
  const auto actual = run(merged.function, with_recipes(originals, merged.recipes), inputs);
  EXPECT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].type, expected[i].type);
    const std::span<const float> a(actual[i].fdata(), actual[i].numel()), e(expected[i].fdata(), expected[i].numel());
    EXPECT_LT(test::relative_l2(a, e), tolerance) << "output " << i;
  }
  return merged;
}

// x [2,5,8] -> three linears of one module named prefix + locals, out widths 8, 8, 6; outputs
// (q * k) and v, so the values flow on through other nodes.
Function three_projections(const std::vector<std::string>& locals, bool bias, const std::string& parent = "blk.attn") {
  Function function("f");
  graph::FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {2, 5, 8}});
  const std::vector<std::int64_t> widths{8, 8, 6};
  std::vector<ValueId> outputs;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string module = parent.empty() ? locals[i] : parent + "." + locals[i];
    std::vector<ValueId> operands{x, b.weight(module + ".weight", {widths[i], 8})};
    if (bias) operands.push_back(b.weight(module + ".bias", {widths[i]}));
    outputs.push_back(b.op("linear", operands));
  }
  function.set_outputs({b.mul(outputs[0], outputs[1]), outputs[2]});
  return function;
}

TEST(MergeQkv, MergesThreeBiasFreeProjectionsIntoOneLinearAndSlices) {
  const Function function = three_projections({"to_q", "to_k", "to_v"}, false);
  const MergeQkvResult merged =
      expect_merge_preserves_outputs(function, random_values(function, 1), {random_input({DType::kF32, {2, 5, 8}}, 2)});
  EXPECT_EQ(test::count_op(merged.function, "linear"), 1u);
  EXPECT_EQ(test::count_op(merged.function, "slice"), 3u);
  EXPECT_EQ(weight_names(merged.function), std::vector<std::string>{"blk.attn.to_qkv.weight"});
  ASSERT_EQ(merged.recipes.size(), 1u);
  const WeightRecipe& recipe = merged.recipes[0];
  EXPECT_EQ(recipe.name, "blk.attn.to_qkv.weight");
  EXPECT_EQ(recipe.kind, WeightRecipe::Kind::kConcatRows);
  EXPECT_EQ(recipe.type, (TensorType{DType::kF32, {22, 8}}));
  ASSERT_EQ(recipe.sources.size(), 3u);
  EXPECT_EQ(recipe.sources[0].name, "blk.attn.to_q.weight");
  EXPECT_EQ(recipe.sources[1].name, "blk.attn.to_k.weight");
  EXPECT_EQ(recipe.sources[2].name, "blk.attn.to_v.weight");
  EXPECT_EQ(recipe.sources[2].type.shape, (Shape{6, 8}));
  // The slices cut [0,8), [8,16), [16,22) of the last axis.
  std::vector<std::int64_t> starts;
  for (const auto& node : merged.function.nodes()) {
    if (node.op->name != "slice") continue;
    EXPECT_EQ(node.attrs.get_int("axis", "test"), 2);
    starts.push_back(node.attrs.get_int("start", "test"));
  }
  EXPECT_EQ(starts, (std::vector<std::int64_t>{0, 8, 16}));
}

TEST(MergeQkv, MergesBiasesWithTheirWeights) {
  const Function function = three_projections({"q_proj", "k_proj", "v_proj"}, true, "text_model.layers.0.self_attn");
  const MergeQkvResult merged =
      expect_merge_preserves_outputs(function, random_values(function, 3), {random_input({DType::kF32, {2, 5, 8}}, 4)});
  EXPECT_EQ(test::count_op(merged.function, "linear"), 1u);
  EXPECT_EQ(weight_names(merged.function), (std::vector<std::string>{"text_model.layers.0.self_attn.qkv_proj.weight",
                                                                     "text_model.layers.0.self_attn.qkv_proj.bias"}));
  ASSERT_EQ(merged.recipes.size(), 2u);
  EXPECT_EQ(merged.recipes[1].type, (TensorType{DType::kF32, {22}}));
  EXPECT_EQ(merged.recipes[1].sources[1].name, "text_model.layers.0.self_attn.k_proj.bias");
}

TEST(MergeQkv, DerivesNamesWithoutModulePaths) {
  // "wq.weight": no parent module.
  const Function function = three_projections({"wq", "wk", "wv"}, false, "");
  EXPECT_EQ(weight_names(merge_qkv(function).function), std::vector<std::string>{"wqkv.weight"});
  // "wq": no parent and no leaf part.
  Function plain("f");
  graph::FunctionBuilder b(plain);
  const ValueId x = b.input("x", {DType::kF32, {3, 4}});
  const ValueId q = b.op("linear", {x, b.weight("wq", {4, 4})});
  const ValueId k = b.op("linear", {x, b.weight("wk", {4, 4})});
  plain.set_outputs({b.add(q, k)});
  const MergeQkvResult merged = merge_qkv(plain);
  verify(merged.function);
  EXPECT_EQ(weight_names(merged.function), std::vector<std::string>{"wqk"});
}

TEST(MergeQkv, CrossAttentionMergesOnlyTheProjectionsOfTheContext) {
  // to_q reads x; to_k and to_v read the context: only k and v share an input.
  Function function("f");
  graph::FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {1, 6, 8}});
  const ValueId context = b.input("context", {DType::kF32, {1, 3, 4}});
  const ValueId q = b.op("linear", {x, b.weight("attn2.to_q.weight", {8, 8})});
  const ValueId k = b.op("linear", {context, b.weight("attn2.to_k.weight", {8, 4})});
  const ValueId v = b.op("linear", {context, b.weight("attn2.to_v.weight", {8, 4})});
  function.set_outputs({b.matmul(b.matmul(q, k, true), v)});
  const MergeQkvResult merged = expect_merge_preserves_outputs(
      function, random_values(function, 5),
      {random_input({DType::kF32, {1, 6, 8}}, 6), random_input({DType::kF32, {1, 3, 4}}, 7)});
  EXPECT_EQ(test::count_op(merged.function, "linear"), 2u);
  EXPECT_EQ(weight_names(merged.function), (std::vector<std::string>{"attn2.to_q.weight", "attn2.to_kv.weight"}));
}

TEST(MergeQkv, MixedBiasesMergeOnlyTheLinearsThatAgree) {
  Function function("f");
  graph::FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {4, 8}});
  const ValueId q = b.op("linear", {x, b.weight("a.to_q.weight", {8, 8}), b.weight("a.to_q.bias", {8})});
  const ValueId k = b.op("linear", {x, b.weight("a.to_k.weight", {8, 8})});
  const ValueId v = b.op("linear", {x, b.weight("a.to_v.weight", {8, 8})});
  function.set_outputs({b.add(b.add(q, k), v)});
  const MergeQkvResult merged =
      expect_merge_preserves_outputs(function, random_values(function, 8), {random_input({DType::kF32, {4, 8}}, 9)});
  EXPECT_EQ(test::count_op(merged.function, "linear"), 2u);
  EXPECT_TRUE(has_weight(merged.function, "a.to_kv.weight"));
  EXPECT_TRUE(has_weight(merged.function, "a.to_q.bias"));
}

TEST(MergeQkv, LeavesLinearsAloneThatDoNotFormAGroup) {
  Function function("f");
  graph::FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {4, 8}});
  // Different modules over one input (like the resnets' time_emb_proj): no group.
  const ValueId p1 = b.op("linear", {x, b.weight("r0.time_emb_proj.weight", {8, 8})});
  const ValueId p2 = b.op("linear", {x, b.weight("r1.time_emb_proj.weight", {8, 8})});
  // A weight that another node reads too: its linear stays.
  const ValueId shared = b.weight("s.to_q.weight", {8, 8});
  const ValueId s1 = b.op("linear", {x, shared});
  const ValueId s2 = b.op("linear", {x, b.weight("s.to_k.weight", {8, 8})});
  // Four projections of one module: more than Q/K/V, left alone.
  ValueId sum = b.add(b.add(p1, p2), b.add(b.add(s1, s2), b.matmul(x, shared)));
  for (const char* local : {"a", "b", "c", "d"})
    sum = b.add(sum, b.op("linear", {x, b.weight(std::string("m.") + local + ".weight", {8, 8})}));
  function.set_outputs({sum});
  const MergeQkvResult merged = merge_qkv(function);
  verify(merged.function);
  EXPECT_TRUE(merged.recipes.empty());
  EXPECT_EQ(test::count_op(merged.function, "linear"), test::count_op(function, "linear"));
  EXPECT_EQ(weight_names(merged.function), weight_names(function));
}

TEST(MergeQkv, MergedNameAvoidsExistingWeights) {
  Function function("f");
  graph::FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {4, 8}});
  const ValueId taken = b.weight("a.to_qk.weight", {4, 8});
  const ValueId q = b.op("linear", {x, b.weight("a.to_q.weight", {8, 8})});
  const ValueId k = b.op("linear", {x, b.weight("a.to_k.weight", {8, 8})});
  function.set_outputs({b.add(q, k), b.add(taken, taken)});
  const MergeQkvResult merged =
      expect_merge_preserves_outputs(function, random_values(function, 10), {random_input({DType::kF32, {4, 8}}, 11)});
  EXPECT_EQ(weight_names(merged.function), (std::vector<std::string>{"a.to_qk.weight", "a.to_qk.weight_merged"}));
}

TEST(MergeQkv, ResultPassesVerifyAndDeadCodeEliminationKeepsEveryWeight) {
  const Function function = three_projections({"to_q", "to_k", "to_v"}, true);
  const MergeQkvResult merged = merge_qkv(function);
  verify(merged.function);
  const DeadCodeResult cleaned = eliminate_dead_code(merged.function);
  verify(cleaned.function);
  EXPECT_TRUE(cleaned.removed_weights.empty());
  EXPECT_EQ(cleaned.removed_nodes, 0u);
  EXPECT_EQ(weight_names(cleaned.function), weight_names(merged.function));
}

TEST(MergeQkv, FunctionsWithoutGroupsComeBackUnchanged) {
  const Function function = test::small_function();
  const MergeQkvResult merged = merge_qkv(function);
  EXPECT_TRUE(merged.recipes.empty());
  ASSERT_EQ(merged.function.nodes().size(), function.nodes().size());
  EXPECT_EQ(weight_names(merged.function), weight_names(function));
}

TEST(MergeQkv, TinyUNetSelfAttentionThreeToOneCrossAttentionTwoToOne) {
  const UNetConfig config = test::tiny_unet_config();
  const Function unet = unet_graph(config, 2, 8, 8, 7);
  const std::size_t transformer_blocks = test::count_op(unet, "attention") / 2;  // attn1 + attn2 each
  ASSERT_GT(transformer_blocks, 0u);
  std::vector<cpu::CpuTensor> inputs;
  for (std::size_t i = 0; i < unet.inputs().size(); ++i) {
    inputs.push_back(random_input(unet.value(unet.inputs()[i]).type, 20 + static_cast<std::uint32_t>(i)));
  }
  std::generate(inputs[1].fdata(), inputs[1].fdata() + inputs[1].numel(), [] { return 500.0f; });  // timesteps
  const MergeQkvResult merged = expect_merge_preserves_outputs(unet, param_values(unet_params(config), 5), inputs);

  EXPECT_EQ(test::count_op(merged.function, "linear"), test::count_op(unet, "linear") - 3 * transformer_blocks);
  EXPECT_EQ(test::count_op(merged.function, "slice"), test::count_op(unet, "slice") + 5 * transformer_blocks);
  ASSERT_EQ(merged.recipes.size(), 2 * transformer_blocks);
  std::size_t qkv = 0, kv = 0;
  for (const auto& recipe : merged.recipes) {
    EXPECT_TRUE(has_weight(merged.function, recipe.name));
    for (const auto& source : recipe.sources) EXPECT_FALSE(has_weight(merged.function, source.name)) << source.name;
    qkv += recipe.name.ends_with(".attn1.to_qkv.weight") && recipe.sources.size() == 3;
    kv += recipe.name.ends_with(".attn2.to_kv.weight") && recipe.sources.size() == 2;
  }
  EXPECT_EQ(qkv, transformer_blocks);
  EXPECT_EQ(kv, transformer_blocks);
  EXPECT_EQ(merged.function.weights().size(), unet.weights().size() - 3 * transformer_blocks);
  EXPECT_TRUE(eliminate_dead_code(merged.function).removed_weights.empty());
}

TEST(MergeQkv, TinyVaeDecoderMergesTheBiasedMidBlockAttention) {
  const VaeConfig config = vae_config_read(test::fixture_path("tiny-sd15/model/vae/config.json"));
  ASSERT_TRUE(config.mid_block_add_attention);
  const Function decoder = vae_decode_graph(config, 1, 4, 4);
  const MergeQkvResult merged = expect_merge_preserves_outputs(
      decoder, param_values(vae_params(config), 6), {random_input(decoder.value(decoder.inputs()[0]).type, 30)});
  EXPECT_EQ(test::count_op(merged.function, "linear"), test::count_op(decoder, "linear") - 2);
  ASSERT_EQ(merged.recipes.size(), 2u);
  EXPECT_EQ(merged.recipes[0].name, "decoder.mid_block.attentions.0.to_qkv.weight");
  EXPECT_EQ(merged.recipes[1].name, "decoder.mid_block.attentions.0.to_qkv.bias");
}

TEST(MergeQkv, TinyClipMergesEveryLayersBiasedProjections) {
  const ClipTextConfig config = clip_config_read(test::fixture_path("tiny-sd15/model/text_encoder/config.json"));
  const Function clip = clip_text_graph(config, 1, 77);
  const MergeQkvResult merged = merge_qkv(clip);
  verify(merged.function);
  const std::size_t layers = test::count_op(clip, "attention");
  ASSERT_GT(layers, 0u);
  EXPECT_EQ(test::count_op(merged.function, "linear"), test::count_op(clip, "linear") - 2 * layers);
  EXPECT_EQ(merged.recipes.size(), 2 * layers);  // weight and bias per layer
  EXPECT_TRUE(has_weight(merged.function, "text_model.encoder.layers.0.self_attn.qkv_proj.bias"));
}

}  // namespace
}  // namespace websd::passes
