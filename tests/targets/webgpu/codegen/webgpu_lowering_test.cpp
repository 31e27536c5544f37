// The webgpu target's lowering of single nodes (webgpu_lowering.h): the launches, bindings,
// packed uniforms and dispatch grids the templates' contract asks for, the WGSL it writes
// (optional operands dropped, every binding writable), and the shapes and attributes it refuses
// with a message naming function, op and what is missing.
#include "targets/webgpu/codegen/webgpu_lowering.h"

#include <gtest/gtest.h>

#include <cstring>

#include "graph/function_builder.h"
#include "support/error_text.h"

namespace websd::webgpu {
namespace {

using runtime::Access;
using websd::test::error_of;

std::uint32_t u32_at(const std::vector<std::byte>& bytes, std::size_t field) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + 4 * field, 4);
  return value;
}

const std::string& text_of(const LoweredNode& lowered) { return lowered.files.at(0).second; }

TEST(WebGpuLowering, ALinearWithoutBiasBindsThreeBuffersAndPacksItsShape) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 5, 32}});
  function.set_outputs({b.op("linear", {x, b.weight("w", {96, 32})})});
  const LoweredNode lowered = lower_webgpu_node(function, function.nodes()[0]);
  ASSERT_EQ(lowered.launches.size(), 1u);
  const passes::NodeLaunch& launch = lowered.launches[0];
  EXPECT_EQ(launch.kernel.entry, "matmul");
  EXPECT_EQ(launch.kernel.source, "file");
  EXPECT_EQ(launch.kernel.file, lowered.files[0].first);
  EXPECT_EQ(launch.kernel.bindings, (std::vector<Access>{Access::kRead, Access::kRead, Access::kWrite}));
  EXPECT_EQ(launch.operands, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(launch.uniforms.size(), 48u);      // 11 fields, padded to 16 bytes
  EXPECT_EQ(u32_at(launch.uniforms, 0), 10u);  // M: the batch dims folded in
  EXPECT_EQ(u32_at(launch.uniforms, 1), 96u);  // N
  EXPECT_EQ(u32_at(launch.uniforms, 2), 32u);  // K
  EXPECT_EQ(u32_at(launch.uniforms, 6), 1u);   // tiles_m
  EXPECT_EQ(u32_at(launch.uniforms, 9), 0u);   // stride_w: one shared weight
  EXPECT_EQ(launch.dispatch, (std::array<std::int64_t, 3>{2, 1, 1}));
  const std::string& text = text_of(lowered);
  EXPECT_NE(text.find("var<private> bias: array<f32, 1>;"), std::string::npos);
  EXPECT_NE(text.find("var<private> residual: array<f32, 1>;"), std::string::npos);
  EXPECT_NE(text.find("@group(0) @binding(2) var<storage, read_write> out"), std::string::npos);
  EXPECT_NE(text.find("@group(0) @binding(3) var<uniform> params"), std::string::npos);
  EXPECT_EQ(text.find("var<storage, read>"), std::string::npos);
  EXPECT_EQ(text.rfind("const BM: u32 = 64u;", 0), 0u);
}

TEST(WebGpuLowering, TheSubgroupMatrixTierRunsLinearLayersAndConvolutionsOnItsOwnTemplates) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 80, 32}});
  const auto image = b.input("image", {DType::kF32, {1, 8, 8, 16}});
  function.set_outputs({b.op("linear", {x, b.weight("w", {96, 32}), b.weight("bias", {96})}),
                        b.op("conv2d_nhwc", {image, b.weight("k", {24, 16, 3, 3}), b.weight("kb", {24})},
                             {{"stride", std::int64_t{1}}, {"padding", std::int64_t{1}}})});
  const LoweredNode linear = lower_webgpu_node(function, function.nodes()[0], kSubgroupMatrixTier);
  ASSERT_EQ(linear.launches.size(), 1u);
  EXPECT_EQ(linear.launches[0].kernel.entry, "matmul");
  // 160 x 96 outputs in 64x64 tiles of 2x2 subgroups; K = 32 is too shallow to split.
  EXPECT_EQ(linear.launches[0].kernel.workgroup_size, (std::array<std::int64_t, 3>{32, 4, 1}));
  EXPECT_EQ(u32_at(linear.launches[0].uniforms, 6), 3u);  // tiles_m: 160 rows in tiles of 64
  EXPECT_EQ(linear.launches[0].dispatch, (std::array<std::int64_t, 3>{2, 3, 1}));
  const std::string& text = text_of(linear);
  // The directives first (WGSL wants them before any declaration), then the constants.
  EXPECT_EQ(text.rfind("enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;\n"
                       "diagnostic(off, chromium.subgroup_matrix_uniformity);\nconst SGM: u32 = 2u;\n",
                       0),
            0u)
      << text.substr(0, 300);
  EXPECT_NE(text.find("subgroupMatrixMultiplyAccumulate"), std::string::npos);
  EXPECT_NE(linear.files[0].first.find("matmul_sgmat_"), std::string::npos);
  // The tier holds the weights its GEMMs read in f16 (operand 1: w), never widened.
  EXPECT_EQ(linear.launches[0].f16_weights, (std::vector<int>{1}));
  EXPECT_NE(text.find("var<storage, read_write> w: array<WeightOperand>;"), std::string::npos);
  EXPECT_NE(text.find("alias WeightOperand = f16;"), std::string::npos);
  // 96 columns are no multiple of the 64-wide tiles: B staged through workgroup memory.
  EXPECT_NE(text.find("const B_DIRECT: bool = false;"), std::string::npos);
  const LoweredNode conv = lower_webgpu_node(function, function.nodes()[1], kSubgroupMatrixTier);
  EXPECT_NE(conv.files[0].first.find("conv2d_nhwc_sgmat_"), std::string::npos);
  EXPECT_EQ(conv.launches[0].kernel.entry, "conv2d_nhwc");
  EXPECT_EQ(conv.launches[0].f16_weights, (std::vector<int>{1}));
  // The f16 tier: the f32 tiles reading the weight in f16.
  const LoweredNode f16_linear = lower_webgpu_node(function, function.nodes()[0], kF16Tier);
  EXPECT_NE(f16_linear.files[0].first.find("kernels/matmul_f16_"), std::string::npos);
  EXPECT_EQ(f16_linear.launches[0].f16_weights, (std::vector<int>{1}));
  EXPECT_EQ(text_of(f16_linear).rfind("enable f16;\nconst BM: u32 = 64u;\n", 0), 0u) << text_of(f16_linear);
  EXPECT_NE(text_of(f16_linear).find("var<storage, read_write> w: array<WeightOperand>;"), std::string::npos);
  const LoweredNode f16_conv = lower_webgpu_node(function, function.nodes()[1], kF16Tier);
  EXPECT_NE(f16_conv.files[0].first.find("kernels/conv2d_nhwc_f16_"), std::string::npos);
  EXPECT_EQ(f16_conv.launches[0].f16_weights, (std::vector<int>{1}));
  // The base tier reads every weight in f32.
  EXPECT_TRUE(lower_webgpu_node(function, function.nodes()[0]).launches[0].f16_weights.empty());
  EXPECT_TRUE(lower_webgpu_node(function, function.nodes()[1]).launches[0].f16_weights.empty());
  // 16384 rows of 1024 columns: two subgroups of 4x4 fragments side by side (64x128 tiles of 64
  // threads), both operands' fragments read straight from storage: x written as f16 first.
  const auto big = b.input("big", {DType::kF32, {16, 1024, 640}});
  function.set_outputs({b.op("linear", {big, b.weight("w2", {1024, 640})})});
  const LoweredNode wide = lower_webgpu_node(function, function.nodes()[2], kSubgroupMatrixTier);
  ASSERT_EQ(wide.launches.size(), 2u);
  EXPECT_EQ(wide.launches[0].kernel.entry, "pad_to_f16");
  EXPECT_EQ(wide.launches[0].dispatch, (std::array<std::int64_t, 3>{20480, 1, 1}));
  EXPECT_EQ(wide.launches[1].kernel.workgroup_size, (std::array<std::int64_t, 3>{32, 2, 1}));
  EXPECT_EQ(wide.launches[1].dispatch, (std::array<std::int64_t, 3>{8, 256, 1}));
  EXPECT_EQ(wide.launches[1].operands, (std::vector<int>{passes::kWorkspaceOperand, 1, 2}));
  const std::string& gemm = wide.files[1].second;
  EXPECT_NE(wide.files[1].first.find("kernels/matmul_sgmat_a16_"), std::string::npos);
  EXPECT_NE(gemm.find("const FM: u32 = 4u;\nconst FN: u32 = 4u;\nconst BM: u32 = 64u;\nconst BN: u32 = 128u;"),
            std::string::npos);
  EXPECT_NE(gemm.find("const B_DIRECT: bool = true;"), std::string::npos);
  // A weight smaller than one fragment (the VAE's 4x4 post_quant_conv) takes the f16 tier's kernel:
  // Dawn sizes the subgroup-matrix kernels' weight binding from their fragment loads.
  const auto latent = b.input("latent", {DType::kF32, {1, 64, 64, 4}});
  function.set_outputs({b.op("conv2d_nhwc", {latent, b.weight("pq", {4, 4, 1, 1}), b.weight("pqb", {4})},
                             {{"stride", std::int64_t{1}}, {"padding", std::int64_t{0}}})});
  EXPECT_NE(lower_webgpu_node(function, function.nodes()[3], kSubgroupMatrixTier)
                .files[0]
                .first.find("kernels/conv2d_nhwc_f16_"),
            std::string::npos);
  // Operands read four k at a time: K = 30 keeps the register tiles, reading the weight in f16.
  const auto odd = b.input("odd", {DType::kF32, {4, 30}});
  function.set_outputs({b.op("linear", {odd, b.weight("w3", {8, 30})})});
  EXPECT_NE(
      lower_webgpu_node(function, function.nodes()[4], kSubgroupMatrixTier).files[0].first.find("kernels/matmul_f16_"),
      std::string::npos);
  EXPECT_EQ(lower_webgpu_node(function, function.nodes()[4], kSubgroupMatrixTier).files[0].first.find("_sgmat_"),
            std::string::npos);
  // a @ b^T of two activations keeps the f32 kernel: only weights are held in f16.
  const auto a = b.input("a", {DType::kF32, {2, 256, 64}});
  const auto bt = b.input("bt", {DType::kF32, {2, 256, 64}});
  function.set_outputs({b.op("matmul", {a, bt}, {{"transpose_b", std::int64_t{1}}})});
  const LoweredNode activations = lower_webgpu_node(function, function.nodes()[5], kSubgroupMatrixTier);
  EXPECT_EQ(activations.files[0].first.find("_sgmat_"), std::string::npos);
  EXPECT_TRUE(activations.launches[0].f16_weights.empty());
  // The base tier keeps the register-tiled templates.
  EXPECT_NE(lower_webgpu_node(function, function.nodes()[0]).files[0].first.find("kernels/matmul_"), std::string::npos);
  EXPECT_NE(error_of([&] { lower_webgpu_node(function, function.nodes()[0], "warp"); }).find("no kernel tier 'warp'"),
            std::string::npos);
}

TEST(WebGpuLowering, SmallGemmsSplitKOverAWorkspaceInEveryTier) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 8, 8, 1280}});
  function.set_outputs({b.op("conv2d_nhwc", {x, b.weight("k", {1280, 1280, 3, 3}), b.weight("kb", {1280})},
                             {{"stride", std::int64_t{1}}, {"padding", std::int64_t{1}}})});
  for (const char* tier : {kF32Tier, kF16Tier, kSubgroupMatrixTier}) {
    SCOPED_TRACE(tier);
    const LoweredNode lowered = lower_webgpu_node(function, function.nodes()[0], tier);
    // 128 x 1280 outputs are 40 tiles of 64x64: K = 11520 in 14 splits for about 528 workgroups,
    // or in the subgroup-matrix tier 7 for about 264.
    const std::int64_t splits = std::string(tier) == kSubgroupMatrixTier ? 7 : 14;
    ASSERT_EQ(lowered.launches.size(), 2u);
    const passes::NodeLaunch& partial = lowered.launches[0];
    const passes::NodeLaunch& reduce = lowered.launches[1];
    EXPECT_EQ(partial.kernel.entry, "conv2d_nhwc");
    EXPECT_EQ(partial.dispatch, (std::array<std::int64_t, 3>{20, 2 * splits, 1}));  // 2 tile rows x splits
    EXPECT_EQ(reduce.kernel.entry, "splitk_reduce");
    EXPECT_EQ(reduce.kernel.workgroup_size, (std::array<std::int64_t, 3>{256, 1, 1}));
    EXPECT_EQ(reduce.dispatch, (std::array<std::int64_t, 3>{640, 1, 1}));
    for (const auto& launch : lowered.launches) {
      EXPECT_EQ(launch.operands, (std::vector<int>{0, 1, 2, 3, passes::kWorkspaceOperand}));
      EXPECT_EQ(launch.workspace_bytes, 4 * splits * 128 * 1280);
    }
    EXPECT_EQ(partial.kernel.bindings.back(), Access::kWrite);
    EXPECT_EQ(reduce.kernel.bindings.back(), Access::kRead);
    const std::string& text = text_of(lowered);
    EXPECT_NE(text.find("const SPLIT_K: u32 = " + std::to_string(splits) + "u;"), std::string::npos);
    EXPECT_NE(text.find("@group(0) @binding(4) var<storage, read_write> workspace"), std::string::npos);
    EXPECT_NE(text.find("@group(0) @binding(5) var<uniform> params"), std::string::npos);
  }
  // The time embedding's linear: 2 x 1280 outputs, K = 1280 in 10 splits of 8 steps of 16 (f32
  // tier's 64x64 tiles: 20 tiles) or 5 of 8 steps of 32 (one subgroup's 32x32 tiles: 40 tiles).
  const auto t = b.input("t", {DType::kF32, {2, 1280}});
  function.set_outputs({b.op("linear", {t, b.weight("w", {1280, 1280}), b.weight("wb", {1280})})});
  const LoweredNode f32_linear = lower_webgpu_node(function, function.nodes()[1]);
  ASSERT_EQ(f32_linear.launches.size(), 2u);
  EXPECT_EQ(f32_linear.launches[0].dispatch, (std::array<std::int64_t, 3>{20, 10, 1}));
  EXPECT_EQ(f32_linear.launches[1].kernel.entry, "splitk_reduce");
  EXPECT_EQ(f32_linear.launches[0].workspace_bytes, 4 * 10 * 2 * 1280);
  const LoweredNode sgmat_linear = lower_webgpu_node(function, function.nodes()[1], kSubgroupMatrixTier);
  EXPECT_EQ(sgmat_linear.launches[0].kernel.workgroup_size, (std::array<std::int64_t, 3>{32, 1, 1}));
  EXPECT_EQ(sgmat_linear.launches[0].dispatch, (std::array<std::int64_t, 3>{40, 5, 1}));
  // The workspace stays within the buffer limit: fewer splits, or none.
  EXPECT_EQ(lower_webgpu_node(function, function.nodes()[1], kF32Tier, 4 * 3 * 2 * 1280).launches[0].dispatch,
            (std::array<std::int64_t, 3>{20, 3, 1}));
  EXPECT_EQ(lower_webgpu_node(function, function.nodes()[1], kF32Tier, 4 * 2 * 1280).launches.size(), 1u);
  // One of 64x64 latents fills the GPU without splitting: no workspace is bound.
  const auto big = b.input("big", {DType::kF32, {2, 64, 64, 320}});
  function.set_outputs({b.op("conv2d_nhwc", {big, b.weight("k2", {320, 320, 3, 3}), b.weight("kb2", {320})},
                             {{"stride", std::int64_t{1}}, {"padding", std::int64_t{1}}})});
  const LoweredNode whole = lower_webgpu_node(function, function.nodes()[2]);
  ASSERT_EQ(whole.launches.size(), 1u);
  EXPECT_EQ(whole.launches[0].workspace_bytes, 0);
  EXPECT_NE(text_of(whole).find("var<private> workspace: array<f32, 1>;"), std::string::npos);
  EXPECT_NE(text_of(whole).find("const SPLIT_K: u32 = 1u;"), std::string::npos);
  // The subgroup-matrix tier's: its input first written as f16, zero-padded (66 x 66 pixels), into
  // the workspace, which the convolution (unsplit) reads as its first binding.
  const LoweredNode a16 = lower_webgpu_node(function, function.nodes()[2], kSubgroupMatrixTier);
  ASSERT_EQ(a16.launches.size(), 2u);
  ASSERT_EQ(a16.files.size(), 2u);
  EXPECT_EQ(a16.launches[0].kernel.entry, "pad_to_f16");
  EXPECT_EQ(a16.launches[0].operands, (std::vector<int>{0, passes::kWorkspaceOperand}));
  EXPECT_EQ(a16.launches[1].kernel.entry, "conv2d_nhwc");
  EXPECT_EQ(a16.launches[1].operands, (std::vector<int>{passes::kWorkspaceOperand, 1, 2, 3}));
  EXPECT_EQ(a16.launches[1].kernel.bindings[0], Access::kRead);
  for (const auto& launch : a16.launches) EXPECT_EQ(launch.workspace_bytes, 2 * 2 * 66 * 66 * 320);
  EXPECT_EQ(a16.files[1].first.find("kernels/conv2d_nhwc_sgmat_a16_"), 0u);
  EXPECT_NE(a16.files[1].second.find("const SPLIT_K: u32 = 1u;"), std::string::npos);
}

TEST(WebGpuLowering, TheSubgroupMatrixTierKeepsTheF32AttentionWhichRanFasterThanItsOwn) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const TensorType type{DType::kF32, {2, 8, 4096, 40}};
  function.set_outputs({b.op("attention", {b.input("q", type), b.input("k", type), b.input("v", type)},
                             {{"scale", 0.158113883}, {"causal", std::int64_t{0}}})});
  const LoweredNode lowered = lower_webgpu_node(function, function.nodes()[0], kSubgroupMatrixTier);
  EXPECT_EQ(lowered.files[0].first, lower_webgpu_node(function, function.nodes()[0]).files[0].first);
  EXPECT_EQ(lowered.files[0].first.find("_sgmat_"), std::string::npos);
}

TEST(WebGpuLowering, GroupNormIsThreeLaunchesOverOneWorkspace) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 16, 16, 64}});
  function.set_outputs({b.op("group_norm_nhwc", {x, b.weight("g", {64}), b.weight("b", {64})},
                             {{"groups", std::int64_t{32}}, {"eps", 1e-6}, {"activation", std::string("silu")}})});
  const LoweredNode lowered = lower_webgpu_node(function, function.nodes()[0]);
  ASSERT_EQ(lowered.launches.size(), 3u);
  EXPECT_EQ(lowered.files.size(), 1u);
  // Cg = 2: chunks of 1024 pixels, so one chunk of the 256.
  EXPECT_EQ(lowered.launches[0].kernel.entry, "gn_partial");
  EXPECT_EQ(lowered.launches[0].dispatch, (std::array<std::int64_t, 3>{1, 32, 2}));
  EXPECT_EQ(lowered.launches[1].kernel.entry, "gn_reduce");
  EXPECT_EQ(lowered.launches[1].dispatch, (std::array<std::int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(lowered.launches[2].kernel.entry, "gn_apply");
  EXPECT_EQ(lowered.launches[2].dispatch, (std::array<std::int64_t, 3>{128, 1, 1}));
  for (const auto& launch : lowered.launches) {
    EXPECT_EQ(launch.operands, (std::vector<int>{0, 1, 2, 3, passes::kWorkspaceOperand}));
    EXPECT_EQ(launch.workspace_bytes, 4 * (2 * 2 * 32 * 1 + 2 * 2 * 32));
    EXPECT_EQ(launch.uniforms, lowered.launches[0].uniforms);
  }
  EXPECT_EQ(lowered.launches[0].kernel.bindings[4], Access::kWrite);
  EXPECT_EQ(lowered.launches[1].kernel.bindings[4], Access::kReadWrite);
  EXPECT_EQ(lowered.launches[2].kernel.bindings[4], Access::kRead);
  EXPECT_NE(text_of(lowered).find("const SILU: bool = true;"), std::string::npos);
}

TEST(WebGpuLowering, FusedProgramsBecomeGeneratedKernelsWithBroadcastOffsets) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {4, 3}});
  const auto bias = b.input("bias", {DType::kF32, {3}});
  function.set_outputs({b.op("fused_elementwise", {x, bias},
                             {{"program", std::string("in0 in1 add gelu c0 mul")},
                              {"constants", std::vector<double>{0.5}},
                              {"kernel", std::string("f_fused_elementwise_0")}})});
  const LoweredNode lowered = lower_webgpu_node(function, function.nodes()[0]);
  ASSERT_EQ(lowered.launches.size(), 1u);
  EXPECT_EQ(lowered.launches[0].kernel.entry, "main");
  EXPECT_EQ(lowered.launches[0].kernel.uniform_bytes, 0);
  EXPECT_EQ(lowered.launches[0].kernel.bindings, (std::vector<Access>{Access::kRead, Access::kRead, Access::kWrite}));
  const std::string& text = text_of(lowered);
  EXPECT_NE(text.find("fn erf_f32"), std::string::npos);
  EXPECT_NE(text.find("if (idx >= 12u)"), std::string::npos);
  EXPECT_NE(text.find("in1[0u + c1]"), std::string::npos) << text;
  EXPECT_NE(text.find("= 0.5;"), std::string::npos) << text;
  // The same program on the same shapes is the same module (one pipeline).
  EXPECT_EQ(lower_webgpu_node(function, function.nodes()[0]).files[0].first, lowered.files[0].first);
}

TEST(WebGpuLowering, WhatTheKernelsDoNotImplementIsRefusedByName) {
  graph::Function function("g");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 3}});
  const auto ids = b.input("ids", {DType::kI64, {4}});
  function.set_outputs({b.concat({x, x, x}, 0), b.matmul(x, b.input("y", {DType::kF32, {3, 2}})),
                        b.op("gather_rows", {b.weight("t", {9, 3}), ids})});
  const auto& nodes = function.nodes();
  EXPECT_NE(error_of([&] {
              lower_webgpu_node(function, nodes[0]);
            }).find("function 'g', op 'concat': a concat of 3 inputs (two are implemented)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { lower_webgpu_node(function, nodes[1]); }).find("only transpose_b=1"), std::string::npos);
  EXPECT_NE(error_of([&] { lower_webgpu_node(function, nodes[2]); }).find("narrow_index_inputs"), std::string::npos);
}

}  // namespace
}  // namespace websd::webgpu
