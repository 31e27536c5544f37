// The compiler's targets (compiler/target.h, target_registry.h): lookup by name, the listing an
// unknown name gets, and the build-time check that every op left after a target's passes is one
// the target supports, naming the op and the function, before anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "compiler/build_artifact.h"
#include "compiler/target_registry.h"
#include "core/error.h"
#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "import/diffusers_checkpoint.h"
#include "passes/pass_pipeline.h"
#include "support/error_text.h"
#include "support/fixtures.h"
#include "targets/cpu/codegen/cpu_target.h"

namespace websd::compiler {
namespace {

using websd::test::error_of;

TEST(TargetRegistry, FindsTheCpuTargetByName) {
  const Target& cpu = find_target("cpu");
  EXPECT_EQ(cpu.name(), "cpu");
  EXPECT_EQ(&cpu, &cpu_target());
  ASSERT_FALSE(registered_targets().empty());
  EXPECT_EQ(registered_targets().front()->name(), "cpu");
}

TEST(TargetRegistry, AnUnknownNameListsTheKnownTargets) {
  for (const std::string typo : {"cpuu", "CPU", "", "webgpu\x9b"}) {
    const std::string error = error_of([&] { find_target(typo); });
    EXPECT_NE(error.find("is not a target this websd builds; known targets: cpu ("), std::string::npos) << error;
    EXPECT_EQ(error.find('\x9b'), std::string::npos) << "control bytes are escaped";
  }
}

TEST(TargetRegistry, TheCpuTargetSupportsItsKernelsAndNotInventedOps) {
  EXPECT_TRUE(cpu_target().supports("conv2d_nhwc"));
  EXPECT_TRUE(cpu_target().supports("matmul"));
  EXPECT_FALSE(cpu_target().supports("warp_drive"));
}

// x [4, 8] through one linear layer with bias, weight proj.weight [6, 8].
graph::Function one_linear_layer() {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {4, 8}});
  const auto w = b.weight("proj.weight", {6, 8});
  function.set_outputs({b.op("linear", {x, w, b.weight("proj.bias", {6})})});
  return function;
}

// `--dtype bf16` on the cpu target: the pass list marks every linear layer (and convolution)
// compute = bf16, and a linear layer's weight is then stored as bf16 in torch's order (values as
// they are, narrowed at import). Convolutions' bf16 packing needs a bf16 CPU: bf16_conv_test.
TEST(CpuTarget, Bf16ComputeMarksLinearLayersAndHoldsTheirWeightsAsBf16) {
  const graph::Function function = one_linear_layer();
  PassListHooks hooks;
  hooks.compute = DType::kBF16;
  const graph::Function compiled = passes::run_pipeline(function, cpu_target().pass_list(hooks)).function;
  int linears = 0;
  for (const auto& node : compiled.nodes()) {
    if (node.op->name != "linear") continue;
    linears += 1;
    EXPECT_EQ(node.attrs.get_string("compute", "linear"), "bf16");
    const std::optional<WeightLayout> layout = cpu_target().weight_layout(compiled, node.inputs[1]);
    ASSERT_TRUE(layout.has_value());
    EXPECT_EQ(layout->name, "bf16-row-major");
    const std::vector<float> values = {1.5f, -2.25f, 3.0f};
    EXPECT_EQ(layout->pack(values), values);
    EXPECT_FALSE(cpu_target().weight_layout(compiled, node.inputs[2]).has_value()) << "the bias stays f32";
  }
  EXPECT_EQ(linears, 1);
  hooks.compute = DType::kF32;
  const graph::Function plain = passes::run_pipeline(function, cpu_target().pass_list(hooks)).function;
  for (const auto& node : plain.nodes()) EXPECT_FALSE(node.attrs.has("compute")) << node.op->name;
  for (const auto id : plain.weights()) EXPECT_FALSE(cpu_target().weight_layout(plain, id).has_value());
  hooks.compute = DType::kF64;
  EXPECT_NE(error_of([&] {
              cpu_target().pass_list(hooks);
            }).find("the cpu target computes in f32 or bf16 (or in f32 over weights held in f16), not f64"),
            std::string::npos);
}

// `--dtype f16` on the cpu target: every linear layer and convolution is marked weights = f16 (and
// computes in f32); a linear layer's weight is then held as f16 in torch's order (values as they
// are, narrowed at import). Convolutions' f16-held packing: f16_weights_test.
TEST(CpuTarget, F16WeightsMarkLinearLayersAndHoldTheirWeightsAsF16) {
  const graph::Function function = one_linear_layer();
  PassListHooks hooks;
  hooks.compute = DType::kF16;
  const graph::Function compiled = passes::run_pipeline(function, cpu_target().pass_list(hooks)).function;
  int linears = 0;
  for (const auto& node : compiled.nodes()) {
    if (node.op->name != "linear") continue;
    linears += 1;
    EXPECT_EQ(node.attrs.get_string("weights", "linear"), "f16");
    EXPECT_FALSE(node.attrs.has("compute"));
    const std::optional<WeightLayout> layout = cpu_target().weight_layout(compiled, node.inputs[1]);
    ASSERT_TRUE(layout.has_value());
    EXPECT_EQ(layout->name, "f16-row-major");
    const std::vector<float> values = {1.5f, -2.25f, 3.0f};
    EXPECT_EQ(layout->pack(values), values);
    EXPECT_FALSE(cpu_target().weight_layout(compiled, node.inputs[2]).has_value()) << "the bias stays f32";
  }
  EXPECT_EQ(linears, 1);
}

TEST(CpuTarget, Bf16ComputeTakesAttentionsProductsInBf16) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto q = b.input("q", {DType::kF32, {1, 2, 16, 8}});
  const auto kv = b.input("kv", {DType::kF32, {1, 2, 7, 8}});
  function.set_outputs({b.op("attention", {q, kv, kv}, {{"scale", 0.35}})});
  for (const DType compute : {DType::kBF16, DType::kF32}) {
    PassListHooks hooks;
    hooks.compute = compute;
    const graph::Function compiled = passes::run_pipeline(function, cpu_target().pass_list(hooks)).function;
    int attentions = 0;
    for (const auto& node : compiled.nodes()) {
      if (node.op->name != "attention") continue;
      attentions += 1;
      if (compute == DType::kBF16) {
        EXPECT_EQ(node.attrs.get_string("compute", "attention"), "bf16");
      } else {
        EXPECT_FALSE(node.attrs.has("compute"));
      }
    }
    EXPECT_EQ(attentions, 1);
  }
}

// The CPU target, less one op its kernels run.
class CpuTargetWithout : public CpuTarget {
 public:
  explicit CpuTargetWithout(std::string missing) : missing_(std::move(missing)) {}
  std::string name() const override { return "cpu-without-" + missing_; }
  bool supports(const std::string& op) const override { return op != missing_ && CpuTarget::supports(op); }

 private:
  std::string missing_;
};

TEST(BuildArtifact, AnOpTheTargetLacksFailsTheBuildNamingOpAndFunction) {
  const std::string out = websd::test::make_temp_dir("target-lacks-op") + "/art";
  BuildOptions options;
  options.checkpoint = std::make_shared<const DiffusersCheckpoint>(
      DiffusersCheckpoint::open(websd::test::fixture_path("tiny-sd15/model")));
  options.out = out;
  // The text encoder comes first and has no convolution: the UNet is the first function to need it.
  const std::string error = error_of([&] { build_artifact(options, CpuTargetWithout("conv2d_nhwc")); });
  EXPECT_NE(error.find("function 'unet' needs op 'conv2d_nhwc', which the 'cpu-without-conv2d_nhwc' target does "
                       "not support"),
            std::string::npos)
      << error;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace websd::compiler
