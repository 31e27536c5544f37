#include "targets/webgpu/codegen/webgpu_lowering.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "graph/op_registry.h"
#include "targets/webgpu/codegen/wgsl_fused_elementwise.h"
#include "targets/webgpu/codegen/wgsl_generated_kernels.h"
#include "targets/webgpu/codegen/wgsl_module.h"

namespace websd::webgpu {
namespace {

using runtime::Access;
using Dispatch = std::array<std::int64_t, 3>;

struct PlannedLaunch {
  std::string entry;
  Dispatch dispatch{1, 1, 1};
  std::vector<int> operands;  // per storage binding: node operand index or kWorkspaceOperand
  std::vector<Access> access;
};

// What a lowering depends on besides the node: the kernel tier and the largest buffer (a split-K
// workspace must fit it).
struct Lowering {
  std::string tier;
  std::int64_t max_buffer_bytes;
};

// One WGSL module and the launches a node makes of it.
struct KernelPlan {
  std::string text;  // the complete module
  std::string stem;  // its file's name without .wgsl
  std::array<std::int64_t, 3> workgroup{kElementwiseWorkgroup, 1, 1};
  std::map<std::string, std::array<std::int64_t, 3>> entry_workgroups;  // entries of another size
  std::vector<ParamField> params;
  std::map<std::string, double> values;
  std::vector<PlannedLaunch> launches;
  std::int64_t workspace_bytes = 0;
  std::vector<int> f16_weights;  // operands the module declares as f16 weights (passes::NodeLaunch)
};

[[noreturn]] void refuse(const graph::Function& function, const graph::Node& node, const std::string& what) {
  throw Error("codegen", "webgpu: function '" + function.symbol() + "', op '" + node.op->name + "': " + what);
}

const TensorType& type_of(const graph::Function& function, graph::ValueId id) { return function.value(id).type; }

std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t a = begin; a < end && a < shape.size(); ++a) p *= shape[a];
  return p;
}

// A template specialized: constants prepended, every binding writable, the storage bindings in
// `unused` (optional operands the constants switch off) dropped, named by its text.
KernelPlan from_template(const std::string& family, const std::vector<WgslConstant>& constants,
                         std::vector<ParamField> params, const std::vector<std::string>& unused = {}) {
  KernelPlan plan;
  plan.text = wgsl_drop_bindings(
      wgsl_all_bindings_writable(wgsl_specialize(wgsl_constant_lines(constants), wgsl_template(family))), unused);
  plan.stem = family + "_" + text_digest(plan.text);
  plan.params = std::move(params);
  return plan;
}

// The standard launch of a one-entry family: operands `reads` read, then `writes` written.
PlannedLaunch plain_launch(const std::string& entry, Dispatch dispatch, std::vector<int> reads,
                           std::vector<int> writes) {
  PlannedLaunch launch{entry, dispatch, {}, {}};
  for (const int r : reads) {
    launch.operands.push_back(r);
    launch.access.push_back(Access::kRead);
  }
  for (const int w : writes) {
    launch.operands.push_back(w);
    launch.access.push_back(Access::kWrite);
  }
  return launch;
}

LoweredNode finish(KernelPlan plan) {
  LoweredNode lowered;
  const std::string file = "kernels/" + plan.stem + ".wgsl";
  std::vector<std::byte> uniforms;
  if (!plan.params.empty()) uniforms = pack_params(plan.params, plan.values);
  for (PlannedLaunch& planned : plan.launches) {
    passes::NodeLaunch launch;
    launch.kernel.name = plan.stem + ":" + planned.entry;
    launch.kernel.source = "file";
    launch.kernel.entry = planned.entry;
    launch.kernel.file = file;
    const auto own = plan.entry_workgroups.find(planned.entry);
    launch.kernel.workgroup_size = own != plan.entry_workgroups.end() ? own->second : plan.workgroup;
    launch.kernel.bindings = planned.access;
    launch.kernel.uniforms = uniform_fields(plan.params);
    launch.kernel.uniform_bytes = plan.params.empty() ? 0 : uniform_bytes(plan.params);
    launch.operands = std::move(planned.operands);
    launch.dispatch = planned.dispatch;
    launch.uniforms = uniforms;
    launch.workspace_bytes = plan.workspace_bytes;
    launch.f16_weights = plan.f16_weights;
    for (const auto d : launch.dispatch) {
      if (d < 1 || d > kMaxWorkgroupsPerDimension) throw Error("codegen", plan.stem + ": dispatch out of range");
    }
    lowered.launches.push_back(std::move(launch));
  }
  lowered.files.emplace_back(file, std::move(plan.text));
  return lowered;
}

const std::vector<ParamField>& matmul_params() {
  static const std::vector<ParamField> params = {{"M", "u32"},        {"N", "u32"},       {"K", "u32"},
                                                 {"lda", "u32"},      {"ldw", "u32"},     {"ldo", "u32"},
                                                 {"tiles_m", "u32"},  {"batch", "u32"},   {"stride_x", "u32"},
                                                 {"stride_w", "u32"}, {"stride_o", "u32"}};
  return params;
}

// The GEMM kernel of a tier for an M x N output (times `batch`): its template family (matmul or
// conv2d_nhwc, plus a suffix), tile constants, output tile, workgroup and splits of K. f32:
// register tiles of 4x4 per thread on 64x64 tiles. f16: the same, reading a weight B stored in
// f16 (`_f16`; so do the subgroup-matrix tier's GEMMs that its own kernels do not take).
// subgroup-matrix: 16x16x16 f16 -> f32 fragments on the tile sgmat_tile picks, B's fragments read
// straight from storage (B_DIRECT) where the tile divides N and the step K; operands read four k
// at a time, so `vec4_operands` (K and C multiples of 4) is required, and B must be a weight
// (`b_is_weight`: held in f16, as the kernels read it).
// Every tier splits K (split-K) where the tiles leave the GPU short of two workgroups per
// multiprocessor (264: an H100's or H200's 132), for about twice that many workgroups, each split
// at least 8 steps deep: the UNet's 16x16 and 8x8 latents (M = 512 and 128 rows of up to 2560
// channels, K up to 23040) and its time embedding (M = 2) otherwise ran a few long tiles on a mostly
// idle GPU (2-5 TFLOP/s on an H100, 2026-12-07).
struct GemmKernel {
  std::string suffix;  // "" (f32 weights), "_f16" or "_sgmat" (both read B as an f16 weight)
  std::vector<WgslConstant> tiles;
  std::int64_t bm = 64, bn = 64;
  std::array<std::int64_t, 3> workgroup{16, 16, 1};
  std::int64_t split_k = 1;
  bool b_direct = false;  // the weight's fragments straight from storage (subgroup-matrix)
};

// The splits of K for `tiles` output tiles of `outputs` f32 values whose workspace (one f32 per
// output per split) must fit `max_workspace_bytes`: about `target` workgroups in all.
std::int64_t gemm_splits(std::int64_t tiles, std::int64_t outputs, std::int64_t K, std::int64_t bk,
                         std::int64_t max_workspace_bytes, std::int64_t target = 528) {
  constexpr std::int64_t kFilledGpu = 264, kMinSteps = 8;
  if (tiles >= kFilledGpu) return 1;
  const std::int64_t split =
      std::min({ceil_div(target, tiles), K / (kMinSteps * bk), max_workspace_bytes / (4 * outputs)});
  return std::max<std::int64_t>(1, split);
}

// The subgroup-matrix tier's tile for an M x N x K GEMM: SGM x SGN subgroups of FM x FN 16x16
// fragments, BK deep, and whether B's fragments come straight from storage (B_DIRECT: the tile
// must divide N and BK the depth). From the H100 sweep (bench/kernels.mjs --tune, 2026-12-07):
// from 2048 rows (the UNet's 64x64 and 32x32 latents, the VAE) one subgroup of 4 x 4 fragments a
// workgroup, two side by side where N allows 128 columns and the rows are many (VAE convolutions
// 65 vs 51 TFLOP/s); below that 2 x 2 subgroups, of 4 x 2 fragments where the 64x64 tiles would
// number 528 or more (the 16x16 latents' GEGLU projection, 48 vs 34 TFLOP/s), else 2 x 2 with
// split-K; one subgroup of 2 x 2 below 64 rows (the time embedding's 2). Staged B keeps 2 x 2
// fragments (its tiles fit 16 KiB of workgroup memory).
struct SgmatTile {
  std::int64_t sgm, sgn, fm, fn, bk = 32;
  bool b_direct = false;
  std::int64_t bm() const { return sgm * fm * 16; }
  std::int64_t bn() const { return sgn * fn * 16; }
};

SgmatTile sgmat_tile(std::int64_t M, std::int64_t N, std::int64_t K) {
  const auto direct = [&](const SgmatTile& tile) { return N % tile.bn() == 0 && K % tile.bk == 0; };
  SgmatTile tile{2, 2, 2, 2};
  if (M >= 2048) {
    tile = M >= 8192 && N % 128 == 0 ? SgmatTile{1, 2, 4, 4} : SgmatTile{1, 1, 4, 4};
  } else if (M >= 128 && ceil_div(M, 64) * ceil_div(N, 64) >= 528) {
    tile = {2, 2, 4, 2};
  } else if (M < 64) {
    tile = {1, 1, 2, 2};
  }
  if (!direct(tile)) tile = M >= 64 ? SgmatTile{2, 2, 2, 2} : SgmatTile{1, 1, 2, 2};
  tile.b_direct = direct(tile);
  return tile;
}

GemmKernel gemm_kernel(const Lowering& how, std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t batch,
                       bool vec4_operands, bool b_is_weight) {
  const std::string& tier = how.tier;
  // Dawn sizes the weight's binding from the fragment loads (512 bytes): smaller weights (the VAE's
  // 4x4 post_quant_conv) take the f16 tier's kernel.
  if (tier == kSubgroupMatrixTier && vec4_operands && b_is_weight && N * K >= 256) {
    constexpr std::int64_t kFragment = 16;
    const SgmatTile t = sgmat_tile(M, N, K);
    const std::int64_t bm = t.bm(), bn = t.bn();
    // Splits counted in workgroups of 4 subgroups, for about 264 of them (the 16x16 latents'
    // 1280-channel convolutions: 28 TFLOP/s in 2 splits, 19 in 4; the 8x8 ones best in 8); none
    // where K is shallow and every multiprocessor already has a tile (the 64x64 latents'
    // convolutions ran 48 TFLOP/s unsplit, 42 in 4 splits).
    const std::int64_t tiles = ceil_div(ceil_div(M, bm) * ceil_div(N, bn) * batch * t.sgm * t.sgn, 4);
    const std::int64_t split =
        K < 4096 && tiles >= 132 ? 1 : gemm_splits(tiles, M * N * batch, K, t.bk, how.max_buffer_bytes, 264);
    const auto u32 = [](const char* name, std::int64_t value) {
      return WgslConstant{name, "u32", static_cast<double>(value)};
    };
    return {"_sgmat",
            {u32("SGM", t.sgm),
             u32("SGN", t.sgn),
             u32("FM", t.fm),
             u32("FN", t.fn),
             u32("BM", bm),
             u32("BN", bn),
             u32("BK", t.bk),
             {"B_DIRECT", "bool", t.b_direct ? 1.0 : 0.0},
             u32("SG_SIZE", 32),
             u32("MMA_M", kFragment),
             u32("MMA_N", kFragment),
             u32("MMA_K", kFragment),
             u32("SPLIT_K", split)},
            bm,
            bn,
            {32, t.sgm * t.sgn, 1},
            split,
            t.b_direct};
  }
  constexpr std::int64_t kTile = 64, kBK = 16;
  const bool f16_weight = b_is_weight && (tier == kF16Tier || tier == kSubgroupMatrixTier);
  const std::int64_t split =
      gemm_splits(ceil_div(M, kTile) * ceil_div(N, kTile) * batch, M * N * batch, K, kBK, how.max_buffer_bytes);
  return {f16_weight ? "_f16" : "",
          {{"BM", "u32", kTile},
           {"BN", "u32", kTile},
           {"BK", "u32", kBK},
           {"TM", "u32", 4},
           {"TN", "u32", 4},
           {"SPLIT_K", "u32", static_cast<double>(split)}},
          kTile,
          kTile,
          {16, 16, 1},
          split};
}

// The subgroup-matrix tier's GEMMs with f16 activations (`_sgmat_a16`): the activation is first
// written as f16 (a convolution's zero-padded) into the node's workspace by pad_to_f16, and the GEMM
// reads both operands as whole fragments from storage, staging nothing. It needs the weight's
// fragments direct, K unsplit, the rows in whole fragments of neighbours (`rows_in_fragments`:
// matmul M a multiple of 16; convolution OW and C multiples of 16) and the f16 copy (`f16_bytes`)
// within one binding. It is not faster everywhere (H100, 2026-12-07, same-shape launches of SD 1.5's
// UNet and VAE, staged -> a16): the 64x64 latents' 3x3 convolutions 0.41 -> 0.33 ms, the 32x32
// latents' GEGLU projection (M 2048, K 640) 0.62 -> 0.35 ms, the 64x64 latents' K = 1280
// projections 0.40 -> under 0.33 ms; but the VAE's convolutions from 128x128 (M 16384 and more:
// 65 -> 52 TFLOP/s, where two subgroups share a staged A tile), the 64x64 latents' GEGLU projection
// (K 320) and the 8x8 latents' (M 512) lost 15-20%. So: convolutions up to 8192 rows, linear
// layers from 2048 rows with K from 640. The whole UNet CFG step moved 72 -> 72 ms with a16
// everywhere it fits.
bool takes_a16(const GemmKernel& kernel, bool conv, std::int64_t M, std::int64_t K, bool rows_in_fragments,
               std::int64_t f16_bytes, const Lowering& how) {
  const bool faster = conv ? M <= 8192 : M >= 2048 && K >= 640;
  return kernel.suffix == "_sgmat" && kernel.b_direct && kernel.split_k == 1 && rows_in_fragments && faster &&
         f16_bytes <= how.max_buffer_bytes;
}

// pad_to_f16's launch over operand 0 ([N, H, W, C] f32) into the workspace ([N, H + 2 pad, W + 2 pad,
// C] f16), which the GEMM launches after it read as their first binding.
LoweredNode f16_operand_launch(std::int64_t N, std::int64_t H, std::int64_t W, std::int64_t C, std::int64_t pad) {
  KernelPlan plan = from_template(
      "pad_to_f16", {}, {{"N", "u32"}, {"H", "u32"}, {"W", "u32"}, {"C", "u32"}, {"pad", "u32"}, {"total", "u32"}});
  const std::int64_t pairs = N * (H + 2 * pad) * (W + 2 * pad) * C / 2;
  plan.values = {{"N", N}, {"H", H}, {"W", W}, {"C", C}, {"pad", pad}, {"total", pairs}};
  plan.workspace_bytes = 4 * pairs;
  plan.launches.push_back({"pad_to_f16",
                           fold_1d(ceil_div(pairs, kElementwiseWorkgroup)),
                           {0, passes::kWorkspaceOperand},
                           {Access::kRead, Access::kWrite}});
  return finish(std::move(plan));
}

// `first`'s launches and files, then `then`'s (one node lowered to several modules).
LoweredNode followed_by(LoweredNode first, LoweredNode then) {
  for (auto& launch : then.launches) first.launches.push_back(std::move(launch));
  for (auto& file : then.files) first.files.push_back(std::move(file));
  return first;
}

// A GEMM node's launches: `entry` over the (N / BN) x row_tiles output tiles, or with split-K that
// over every split's tiles into the workspace (the first launch's code also names out, its
// split-free path, so it counts as written there too), then splitk_reduce over the `outputs`.
void plan_gemm_launches(KernelPlan& plan, const GemmKernel& kernel, const std::string& entry, std::int64_t N,
                        std::int64_t row_tiles, std::int64_t outputs, const std::vector<int>& reads, int out) {
  PlannedLaunch tiles = plain_launch(entry, fold_yz(ceil_div(N, kernel.bn), row_tiles * kernel.split_k), reads, {out});
  if (kernel.split_k == 1) {
    plan.launches.push_back(std::move(tiles));
    return;
  }
  plan.workspace_bytes = 4 * kernel.split_k * outputs;
  tiles.operands.push_back(passes::kWorkspaceOperand);
  tiles.access.push_back(Access::kWrite);
  PlannedLaunch reduce = plain_launch("splitk_reduce", fold_1d(ceil_div(outputs, kElementwiseWorkgroup)), reads, {out});
  reduce.operands.push_back(passes::kWorkspaceOperand);
  reduce.access.push_back(Access::kRead);
  plan.entry_workgroups["splitk_reduce"] = {kElementwiseWorkgroup, 1, 1};
  plan.launches.push_back(std::move(tiles));
  plan.launches.push_back(std::move(reduce));
}

std::vector<WgslConstant> gemm_constants(const GemmKernel& kernel, bool bias, bool residual) {
  std::vector<WgslConstant> constants = kernel.tiles;
  constants.push_back({"HAS_BIAS", "bool", bias ? 1.0 : 0.0});
  constants.push_back({"HAS_RESIDUAL", "bool", residual ? 1.0 : 0.0});
  constants.push_back({"ACTIVATION", "u32", 0});
  return constants;
}

// Whether `id` is one of the function's weights (a constant the device holds in the tier's form).
bool is_weight(const graph::Function& function, graph::ValueId id) {
  return std::find(function.weights().begin(), function.weights().end(), id) != function.weights().end();
}

// x [.., K] @ w[N, K]^T (+ bias): leading dims fold into M; or batched a[b] @ bT[b]^T.
LoweredNode lower_gemm(const graph::Function& function, const graph::Node& node, std::int64_t M, std::int64_t N,
                       std::int64_t K, std::int64_t batch, bool weight_batched, bool bias, const Lowering& how) {
  GemmKernel kernel = gemm_kernel(how, M, N, K, batch, K % 4 == 0, is_weight(function, node.inputs[1]));
  const bool a16 = takes_a16(kernel, false, M, K, M % 16 == 0, 2 * batch * M * K, how);
  if (a16) kernel.suffix += "_a16";
  std::vector<std::string> unused = {"residual"};
  if (!bias) unused.push_back("bias");
  if (kernel.split_k == 1) unused.push_back("workspace");
  KernelPlan plan =
      from_template("matmul" + kernel.suffix, gemm_constants(kernel, bias, false), matmul_params(), unused);
  plan.workgroup = kernel.workgroup;
  if (!kernel.suffix.empty()) plan.f16_weights = {1};
  const std::int64_t tiles_m = ceil_div(M, kernel.bm);
  plan.values = {{"M", M},
                 {"N", N},
                 {"K", K},
                 {"lda", K},
                 {"ldw", K},
                 {"ldo", N},
                 {"tiles_m", tiles_m},
                 {"batch", batch},
                 {"stride_x", M * K},
                 {"stride_w", weight_batched ? N * K : 0},
                 {"stride_o", M * N}};
  const int out = static_cast<int>(node.inputs.size());
  std::vector<int> reads = {a16 ? passes::kWorkspaceOperand : 0, 1};
  if (bias) reads.push_back(2);
  plan_gemm_launches(plan, kernel, "matmul", N, tiles_m * batch, batch * M * N, reads, out);
  if (!a16) return finish(std::move(plan));
  plan.workspace_bytes = 2 * batch * M * K;
  return followed_by(f16_operand_launch(1, 1, batch * M, K, 0), finish(std::move(plan)));
}

LoweredNode lower_linear(const graph::Function& function, const graph::Node& node, const Lowering& how) {
  const TensorType& x = type_of(function, node.inputs[0]);
  const TensorType& w = type_of(function, node.inputs[1]);
  const std::int64_t K = w.shape[1], N = w.shape[0];
  return lower_gemm(function, node, x.numel() / K, N, K, 1, false, node.inputs.size() == 3, how);
}

LoweredNode lower_matmul(const graph::Function& function, const graph::Node& node, const Lowering& how) {
  if (node.attrs.get_int("transpose_b", 0, "matmul") == 0) {
    refuse(function, node, "only transpose_b=1 is implemented (a @ b^T, both read along K)");
  }
  const Shape& a = type_of(function, node.inputs[0]).shape;
  const Shape& b = type_of(function, node.inputs[1]).shape;
  const Shape& out = type_of(function, node.outputs[0]).shape;
  const std::int64_t M = a[a.size() - 2], K = a.back(), N = b[b.size() - 2];
  const std::int64_t batch = product(out, 0, out.size() - 2);
  const std::int64_t a_batch = product(a, 0, a.size() - 2), b_batch = product(b, 0, b.size() - 2);
  if (a_batch != batch || (b_batch != batch && b_batch != 1)) {
    refuse(function, node, "a's batch dimensions must be the output's and b's equal to them or all 1");
  }
  return lower_gemm(function, node, M, N, K, batch, b_batch != 1, false, how);
}

LoweredNode lower_conv(const graph::Function& function, const graph::Node& node, const Lowering& how) {
  const Shape& x = type_of(function, node.inputs[0]).shape;  // N, H, W, C
  const Shape& w = type_of(function, node.inputs[1]).shape;  // O, C, KH, KW (stored [O, KH, KW, C])
  const Shape& out = type_of(function, node.outputs[0]).shape;
  const bool residual = node.inputs.size() == 4;
  const std::int64_t K = w[1] * w[2] * w[3];
  GemmKernel kernel =
      gemm_kernel(how, out[0] * out[1] * out[2], w[0], K, 1, x[3] % 4 == 0, is_weight(function, node.inputs[1]));
  const std::int64_t pad = node.attrs.get_int("padding", 0, "conv2d_nhwc");
  const std::int64_t f16_bytes = 2 * x[0] * (x[1] + 2 * pad) * (x[2] + 2 * pad) * x[3];
  const bool a16 =
      takes_a16(kernel, true, out[0] * out[1] * out[2], K, out[2] % 16 == 0 && x[3] % 16 == 0, f16_bytes, how);
  if (a16) kernel.suffix += "_a16";
  std::vector<std::string> unused;
  if (!residual) unused.push_back("residual");
  if (kernel.split_k == 1) unused.push_back("workspace");
  KernelPlan plan = from_template("conv2d_nhwc" + kernel.suffix, gemm_constants(kernel, true, residual),
                                  {{"N", "u32"},
                                   {"H", "u32"},
                                   {"W", "u32"},
                                   {"C", "u32"},
                                   {"OH", "u32"},
                                   {"OW", "u32"},
                                   {"O", "u32"},
                                   {"KH", "u32"},
                                   {"KW", "u32"},
                                   {"stride", "u32"},
                                   {"pad", "u32"},
                                   {"M", "u32"},
                                   {"K", "u32"},
                                   {"tiles_m", "u32"}},
                                  unused);
  plan.workgroup = kernel.workgroup;
  if (!kernel.suffix.empty()) plan.f16_weights = {1};
  const std::int64_t M = out[0] * out[1] * out[2], tiles_m = ceil_div(M, kernel.bm);
  plan.values = {{"N", x[0]},
                 {"H", x[1]},
                 {"W", x[2]},
                 {"C", x[3]},
                 {"OH", out[1]},
                 {"OW", out[2]},
                 {"O", w[0]},
                 {"KH", w[2]},
                 {"KW", w[3]},
                 {"stride", static_cast<double>(node.attrs.get_int("stride", 1, "conv2d_nhwc"))},
                 {"pad", static_cast<double>(pad)},
                 {"M", M},
                 {"K", K},
                 {"tiles_m", tiles_m}};
  const int out_operand = static_cast<int>(node.inputs.size());
  std::vector<int> reads = {a16 ? passes::kWorkspaceOperand : 0, 1, 2};
  if (residual) reads.push_back(3);
  plan_gemm_launches(plan, kernel, "conv2d_nhwc", w[0], tiles_m, M * w[0], reads, out_operand);
  if (!a16) return finish(std::move(plan));
  plan.workspace_bytes = f16_bytes;
  return followed_by(f16_operand_launch(x[0], x[1], x[2], x[3], pad), finish(std::move(plan)));
}

// Workgroup memory of the attention template's tiles (its header's formula).
std::int64_t attention_shared_bytes(std::int64_t d, std::int64_t dv, std::int64_t tpr, std::int64_t bq,
                                    std::int64_t bkv) {
  return 4 * (bkv * (d + dv) + (tpr > 1 ? bq * tpr * (bkv + 1) : 1));
}

// Every tier's: attention_sgmat.wgsl (flash attention on subgroup matrices) ran at half this
// kernel's speed on an H100 (7.5 vs 13-14 TFLOP/s over 4096 tokens, 2026-12-07), so the compiler
// does not emit it (web/kernels/wgsl_templates.mjs keeps it, tested and benchmarked, to improve).
LoweredNode lower_attention(const graph::Function& function, const graph::Node& node) {
  const Shape& q = type_of(function, node.inputs[0]).shape;  // B, H, Sq, D
  const Shape& k = type_of(function, node.inputs[1]).shape;
  const Shape& v = type_of(function, node.inputs[2]).shape;
  const std::int64_t B = q[0], H = q[1], Sq = q[2], D = q[3], Skv = k[2], Dv = v[3];
  const std::int64_t tpr = D <= 48 ? 1 : D <= 96 ? 2 : 4;
  const std::int64_t bq = tpr == 1 ? 128 : tpr == 2 ? 64 : 32;
  if ((D / tpr) % 4 != 0 || (Dv / tpr) % 4 != 0 || D % tpr != 0 || Dv % tpr != 0) {
    refuse(function, node,
           "head dimensions " + std::to_string(D) + "/" + std::to_string(Dv) + " must split into multiples of 4 over " +
               std::to_string(tpr) + " threads per row");
  }
  std::int64_t bkv = 0;
  // 16 keys a tile at most, 8 for one thread per row: D=40 over 4096 tokens ran 22.4 TFLOP/s with
  // 8, 14.7 with 16, 13.2 with 32 (H100, 2026-12-07, node bench/kernels.mjs --tune).
  for (const std::int64_t candidate : {tpr == 1 ? 8 : 16, 8, 4}) {
    if (attention_shared_bytes(D, Dv, tpr, bq, candidate) <= 16384) {
      bkv = candidate;
      break;
    }
  }
  if (bkv == 0) refuse(function, node, "head dimension " + std::to_string(D) + " needs more than 16 KiB of tiles");
  const bool causal = node.attrs.get_int("causal", 0, "attention") != 0;
  std::vector<ParamField> params = {{"H", "u32"}, {"Sq", "u32"}, {"Skv", "u32"}, {"scale", "f32"}};
  for (const char* t : {"q", "k", "v", "o"}) {
    for (const char* f : {"off", "sb", "sh", "ss"}) params.push_back({std::string(t) + "_" + f, "u32"});
  }
  params.push_back({"bh", "u32"});
  KernelPlan plan = from_template("attention",
                                  {{"HEAD_DIM", "u32", static_cast<double>(D)},
                                   {"HEAD_DIM_V", "u32", static_cast<double>(Dv)},
                                   {"TPR", "u32", static_cast<double>(tpr)},
                                   {"BQ", "u32", static_cast<double>(bq)},
                                   {"BKV", "u32", static_cast<double>(bkv)},
                                   {"RPT", "u32", 1},
                                   {"CAUSAL", "bool", causal ? 1.0 : 0.0}},
                                  std::move(params));
  plan.workgroup = {bq * tpr, 1, 1};
  plan.values = {
      {"H", H}, {"Sq", Sq}, {"Skv", Skv}, {"scale", node.attrs.get_float("scale", "attention")}, {"bh", B * H}};
  const auto dense = [&](const char* t, std::int64_t S, std::int64_t d) {
    plan.values[std::string(t) + "_off"] = 0;
    plan.values[std::string(t) + "_sb"] = static_cast<double>(H * S * d);
    plan.values[std::string(t) + "_sh"] = static_cast<double>(S * d);
    plan.values[std::string(t) + "_ss"] = static_cast<double>(d);
  };
  dense("q", Sq, D);
  dense("k", Skv, D);
  dense("v", Skv, Dv);
  dense("o", Sq, Dv);
  plan.launches.push_back(plain_launch("attention", fold_yz(ceil_div(Sq, bq), B * H), {0, 1, 2}, {3}));
  return finish(std::move(plan));
}

LoweredNode lower_group_norm(const graph::Function& function, const graph::Node& node) {
  const Shape& x = type_of(function, node.inputs[0]).shape;  // N, H, W, C
  const std::int64_t N = x[0], HW = x[1] * x[2], C = x[3], G = node.attrs.get_int("groups", "group_norm_nhwc");
  const std::int64_t Cg = C / G;
  const std::int64_t chunk_pixels = std::max(ceil_div(2048, Cg), ceil_div(HW, kMaxWorkgroupsPerDimension));
  const std::int64_t n_chunks = ceil_div(HW, chunk_pixels);
  const std::int64_t total = N * HW * C, stats_off = 2 * N * G * n_chunks;
  const bool silu = node.attrs.has("activation");
  KernelPlan plan = from_template("group_norm_nhwc", {{"SILU", "bool", silu ? 1.0 : 0.0}},
                                  {{"N", "u32"},
                                   {"HW", "u32"},
                                   {"C", "u32"},
                                   {"G", "u32"},
                                   {"Cg", "u32"},
                                   {"chunk_pixels", "u32"},
                                   {"n_chunks", "u32"},
                                   {"eps", "f32"},
                                   {"total", "u32"},
                                   {"stats_off", "u32"}});
  plan.values = {{"N", N},
                 {"HW", HW},
                 {"C", C},
                 {"G", G},
                 {"Cg", Cg},
                 {"chunk_pixels", chunk_pixels},
                 {"n_chunks", n_chunks},
                 {"eps", node.attrs.get_float("eps", "group_norm_nhwc")},
                 {"total", total},
                 {"stats_off", stats_off}};
  plan.workspace_bytes = 4 * (stats_off + 2 * N * G);
  if (N > kMaxWorkgroupsPerDimension || G > kMaxWorkgroupsPerDimension) refuse(function, node, "too many groups");
  // Every launch binds x, gamma, beta, out and the workspace; the first writes the workspace,
  // the second reads and writes it, the last reads it and writes out.
  const int ws = passes::kWorkspaceOperand;
  plan.launches.push_back({"gn_partial",
                           {n_chunks, G, N},
                           {0, 1, 2, 3, ws},
                           {Access::kRead, Access::kRead, Access::kRead, Access::kWrite, Access::kWrite}});
  plan.launches.push_back({"gn_reduce",
                           fold_1d(N * G),
                           {0, 1, 2, 3, ws},
                           {Access::kRead, Access::kRead, Access::kRead, Access::kWrite, Access::kReadWrite}});
  plan.launches.push_back({"gn_apply",
                           fold_1d(ceil_div(total, kElementwiseWorkgroup)),
                           {0, 1, 2, 3, ws},
                           {Access::kRead, Access::kRead, Access::kRead, Access::kWrite, Access::kRead}});
  return finish(std::move(plan));
}

LoweredNode lower_layer_norm(const graph::Function& function, const graph::Node& node) {
  const TensorType& x = type_of(function, node.inputs[0]);
  const std::int64_t D = x.shape.back(), rows = x.numel() / D;
  KernelPlan plan = from_template("layer_norm", {}, {{"rows", "u32"}, {"D", "u32"}, {"eps", "f32"}});
  plan.values = {{"rows", rows}, {"D", D}, {"eps", node.attrs.get_float("eps", "layer_norm")}};
  plan.launches.push_back(plain_launch("layer_norm", fold_1d(rows), {0, 1, 2}, {3}));
  return finish(std::move(plan));
}

LoweredNode lower_softmax(const graph::Function& function, const graph::Node& node) {
  const TensorType& x = type_of(function, node.inputs[0]);
  const std::int64_t axis = node.attrs.get_int("axis", -1, "softmax");
  if (axis != -1 && axis != x.rank() - 1)
    refuse(function, node, "attribute 'axis' = " + std::to_string(axis) + ": only the last axis is implemented");
  const std::int64_t D = x.shape.back(), rows = x.numel() / D;
  KernelPlan plan = from_template("softmax", {}, {{"rows", "u32"}, {"D", "u32"}});
  plan.values = {{"rows", rows}, {"D", D}};
  plan.launches.push_back(plain_launch("softmax", fold_1d(rows), {0}, {1}));
  return finish(std::move(plan));
}

LoweredNode lower_geglu(const graph::Function& function, const graph::Node& node) {
  const TensorType& out = type_of(function, node.outputs[0]);
  const std::int64_t F = out.shape.back(), total = out.numel();
  KernelPlan plan = from_template("geglu", {}, {{"total", "u32"}, {"F", "u32"}});
  plan.values = {{"total", total}, {"F", F}};
  plan.launches.push_back(plain_launch("geglu", fold_1d(ceil_div(total, kElementwiseWorkgroup)), {0}, {1}));
  return finish(std::move(plan));
}

// Shape ops of rank <= 6, padded with leading axes of 1 (stride 0).
std::vector<std::int64_t> pad6(const graph::Function& function, const graph::Node& node,
                               const std::vector<std::int64_t>& values, std::int64_t fill) {
  if (values.size() > 6) refuse(function, node, "rank " + std::to_string(values.size()) + " > 6");
  std::vector<std::int64_t> padded(6 - values.size(), fill);
  padded.insert(padded.end(), values.begin(), values.end());
  return padded;
}

void set6(KernelPlan& plan, const std::string& name, const std::vector<std::int64_t>& values) {
  for (int a = 0; a < 6; ++a) plan.values[name + std::to_string(a)] = static_cast<double>(values[a]);
}

std::vector<ParamField> fields6(const std::string& name) {
  std::vector<ParamField> fields;
  for (int a = 0; a < 6; ++a) fields.push_back({name + std::to_string(a), "u32"});
  return fields;
}

LoweredNode lower_permute(const graph::Function& function, const graph::Node& node) {
  const Shape& dims = type_of(function, node.inputs[0]).shape;
  const Shape& out = type_of(function, node.outputs[0]).shape;
  const std::vector<std::int64_t>& perm = node.attrs.get_ints("perm", "permute");
  std::vector<std::int64_t> strides(dims.size()), permuted;
  for (std::size_t a = 0; a < dims.size(); ++a) strides[a] = product(dims, a + 1, dims.size());
  for (const auto a : perm) permuted.push_back(strides[static_cast<std::size_t>(a < 0 ? a + dims.size() : a)]);
  std::vector<ParamField> params = {{"total", "u32"}};
  for (const auto& f : fields6("d")) params.push_back(f);
  for (const auto& f : fields6("s")) params.push_back(f);
  KernelPlan plan = from_template("permute", {}, std::move(params));
  const std::int64_t total = product(dims, 0, dims.size());
  plan.values["total"] = static_cast<double>(total);
  set6(plan, "d", pad6(function, node, out, 1));
  set6(plan, "s", pad6(function, node, permuted, 0));
  plan.launches.push_back(plain_launch("permute", fold_1d(ceil_div(total, kElementwiseWorkgroup)), {0}, {1}));
  return finish(std::move(plan));
}

std::size_t axis_of(const graph::Node& node, const char* op, std::int64_t rank) {
  const std::int64_t axis = node.attrs.get_int("axis", op);
  return static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
}

LoweredNode lower_slice(const graph::Function& function, const graph::Node& node) {
  const Shape& dims = type_of(function, node.inputs[0]).shape;
  const std::size_t axis = axis_of(node, "slice", static_cast<std::int64_t>(dims.size()));
  const std::int64_t start = node.attrs.get_int("start", "slice"), end = node.attrs.get_int("end", "slice");
  const std::int64_t inner = product(dims, axis + 1, dims.size()), outer = product(dims, 0, axis);
  const std::int64_t total = outer * (end - start) * inner;
  KernelPlan plan = from_template(
      "slice", {}, {{"total", "u32"}, {"inner", "u32"}, {"len_out", "u32"}, {"len_in", "u32"}, {"start", "u32"}});
  plan.values = {
      {"total", total}, {"inner", inner}, {"len_out", end - start}, {"len_in", dims[axis]}, {"start", start}};
  plan.launches.push_back(plain_launch("slice", fold_1d(ceil_div(total, kElementwiseWorkgroup)), {0}, {1}));
  return finish(std::move(plan));
}

LoweredNode lower_generated(GeneratedWgsl generated, std::vector<int> reads, int output);

LoweredNode lower_concat(const graph::Function& function, const graph::Node& node) {
  if (node.inputs.size() != 2) {
    refuse(function, node, "a concat of " + std::to_string(node.inputs.size()) + " inputs (two are implemented)");
  }
  const Shape& a = type_of(function, node.inputs[0]).shape;
  const Shape& b = type_of(function, node.inputs[1]).shape;
  const std::size_t axis = axis_of(node, "concat", static_cast<std::int64_t>(a.size()));
  const std::int64_t inner = product(a, axis + 1, a.size()), outer = product(a, 0, axis);
  if (node.inputs[0] == node.inputs[1]) return lower_generated(concat_self_wgsl(outer, a[axis], inner), {0}, 2);
  const std::int64_t total = outer * (a[axis] + b[axis]) * inner;
  KernelPlan plan =
      from_template("concat", {}, {{"total", "u32"}, {"inner", "u32"}, {"len_a", "u32"}, {"len_b", "u32"}});
  plan.values = {{"total", total}, {"inner", inner}, {"len_a", a[axis]}, {"len_b", b[axis]}};
  plan.launches.push_back(plain_launch("concat", fold_1d(ceil_div(total, kElementwiseWorkgroup)), {0, 1}, {2}));
  return finish(std::move(plan));
}

LoweredNode lower_pad(const graph::Function& function, const graph::Node& node) {
  if (node.attrs.get_float("value", 0.0, "pad") != 0.0) refuse(function, node, "padding with a value other than 0");
  const Shape& dims = type_of(function, node.inputs[0]).shape;
  const Shape& out = type_of(function, node.outputs[0]).shape;
  const std::vector<std::int64_t>& pads = node.attrs.get_ints("pads", "pad");
  std::vector<std::int64_t> before;
  for (std::size_t a = 0; a < dims.size(); ++a) before.push_back(pads[2 * a]);
  std::vector<ParamField> params = {{"total", "u32"}};
  for (const char* name : {"od", "id", "b"}) {
    for (const auto& f : fields6(name)) params.push_back(f);
  }
  KernelPlan plan = from_template("pad", {}, std::move(params));
  const std::int64_t total = product(out, 0, out.size());
  plan.values["total"] = static_cast<double>(total);
  set6(plan, "od", pad6(function, node, out, 1));
  set6(plan, "id", pad6(function, node, dims, 1));
  set6(plan, "b", pad6(function, node, before, 0));
  plan.launches.push_back(plain_launch("pad", fold_1d(ceil_div(total, kElementwiseWorkgroup)), {0}, {1}));
  return finish(std::move(plan));
}

LoweredNode lower_upsample(const graph::Function& function, const graph::Node& node) {
  const Shape& x = type_of(function, node.inputs[0]).shape;  // N, H, W, C
  const std::int64_t scale = node.attrs.get_int("scale", "upsample_nearest_nhwc");
  const std::int64_t total = x[0] * x[1] * scale * x[2] * scale * x[3];
  KernelPlan plan = from_template("upsample_nearest_nhwc", {},
                                  {{"total", "u32"}, {"H", "u32"}, {"W", "u32"}, {"C", "u32"}, {"scale", "u32"}});
  plan.values = {{"total", total}, {"H", x[1]}, {"W", x[2]}, {"C", x[3]}, {"scale", scale}};
  plan.launches.push_back(
      plain_launch("upsample_nearest_nhwc", fold_1d(ceil_div(total, kElementwiseWorkgroup)), {0}, {1}));
  return finish(std::move(plan));
}

LoweredNode lower_gather_rows(const graph::Function& function, const graph::Node& node) {
  const Shape& table = type_of(function, node.inputs[0]).shape;
  const TensorType& ids = type_of(function, node.inputs[1]);
  if (ids.dtype != DType::kI32) {
    refuse(function, node, "ids are " + std::string(dtype_name(ids.dtype)) + "; WGSL reads i32 (narrow_index_inputs)");
  }
  const std::int64_t total = ids.numel() * table[1];
  KernelPlan plan =
      from_template("gather_rows", {}, {{"total", "u32"}, {"D", "u32"}, {"row_begin", "u32"}, {"rows", "u32"}});
  plan.values = {{"total", total}, {"D", table[1]}, {"row_begin", 0}, {"rows", table[0]}};
  plan.launches.push_back(plain_launch("gather_rows", fold_1d(ceil_div(total, kElementwiseWorkgroup)), {0, 1}, {2}));
  return finish(std::move(plan));
}

// A generated module (fused elementwise, constant, concat_self): one entry "main", no uniforms,
// binding the node operands `reads` and then `output`.
LoweredNode lower_generated(GeneratedWgsl generated, std::vector<int> reads, int output) {
  KernelPlan plan;
  plan.text = std::move(generated.text);
  plan.stem = generated.family + "_" + text_digest(plan.text);
  plan.launches.push_back(
      plain_launch("main", fold_1d(ceil_div(generated.threads, kElementwiseWorkgroup)), std::move(reads), {output}));
  return finish(std::move(plan));
}

LoweredNode lower_by_op(const graph::Function& function, const graph::Node& node, const Lowering& how) {
  const std::string& op = node.op->name;
  for (const auto id : node.outputs) {
    const DType dtype = type_of(function, id).dtype;
    if (dtype != DType::kF32) {
      refuse(function, node, "output dtype " + std::string(dtype_name(dtype)) + " (this tier computes in f32)");
    }
  }
  if (op == "linear") return lower_linear(function, node, how);
  if (op == "matmul") return lower_matmul(function, node, how);
  if (op == "conv2d_nhwc") return lower_conv(function, node, how);
  if (op == "attention") return lower_attention(function, node);
  if (op == "group_norm_nhwc") return lower_group_norm(function, node);
  if (op == "layer_norm") return lower_layer_norm(function, node);
  if (op == "softmax") return lower_softmax(function, node);
  if (op == "geglu") return lower_geglu(function, node);
  if (op == "permute") return lower_permute(function, node);
  if (op == "slice") return lower_slice(function, node);
  if (op == "concat") return lower_concat(function, node);
  if (op == "pad") return lower_pad(function, node);
  if (op == "upsample_nearest_nhwc") return lower_upsample(function, node);
  if (op == "gather_rows") return lower_gather_rows(function, node);
  if (op == "constant") {
    return lower_generated(
        constant_wgsl(node.attrs.get_floats("values", "constant"), type_of(function, node.outputs[0]).numel()), {}, 0);
  }
  if (op == "fused_elementwise") {
    std::vector<TensorType> inputs;
    for (const auto id : node.inputs) inputs.push_back(type_of(function, id));
    std::vector<int> reads;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) reads.push_back(static_cast<int>(i));
    return lower_generated(fused_elementwise_wgsl(ops::fused_program_from_attrs(node.attrs, node.inputs.size()), inputs,
                                                  type_of(function, node.outputs[0])),
                           std::move(reads), static_cast<int>(node.inputs.size()));
  }
  refuse(function, node, "no WGSL kernel for this op");
}

}  // namespace

bool webgpu_attention_fits(std::int64_t head_dim, std::int64_t value_head_dim) {
  const std::int64_t tpr = head_dim <= 48 ? 1 : head_dim <= 96 ? 2 : 4;
  const std::int64_t bq = tpr == 1 ? 128 : tpr == 2 ? 64 : 32;
  if (head_dim % tpr != 0 || value_head_dim % tpr != 0 || (head_dim / tpr) % 4 != 0 ||
      (value_head_dim / tpr) % 4 != 0) {
    return false;
  }
  return attention_shared_bytes(head_dim, value_head_dim, tpr, bq, 4) <= 16384;
}

bool webgpu_lowers(const std::string& op) {
  static const std::set<std::string> ops = {"linear",
                                            "matmul",
                                            "conv2d_nhwc",
                                            "attention",
                                            "group_norm_nhwc",
                                            "layer_norm",
                                            "softmax",
                                            "geglu",
                                            "permute",
                                            "slice",
                                            "concat",
                                            "pad",
                                            "upsample_nearest_nhwc",
                                            "gather_rows",
                                            "constant",
                                            "fused_elementwise"};
  return ops.count(op) > 0;
}

LoweredNode lower_webgpu_node(const graph::Function& function, const graph::Node& node, const std::string& tier,
                              std::int64_t max_buffer_bytes) {
  if (tier != kF32Tier && tier != kF16Tier && tier != kSubgroupMatrixTier)
    throw Error("codegen", "webgpu: no kernel tier '" + tier + "'");
  LoweredNode lowered = lower_by_op(function, node, {tier, max_buffer_bytes});
  // Every binding is writable (wgsl_module.h): one value bound twice in a launch is refused by
  // WebGPU, so it is refused here, at build time.
  std::vector<graph::ValueId> operands = node.inputs;
  operands.insert(operands.end(), node.outputs.begin(), node.outputs.end());
  for (const passes::NodeLaunch& launch : lowered.launches) {
    std::set<graph::ValueId> bound;
    for (const int operand : launch.operands) {
      if (operand == passes::kWorkspaceOperand) continue;
      if (!bound.insert(operands[static_cast<std::size_t>(operand)]).second) {
        refuse(function, node,
               "kernel '" + launch.kernel.name + "' would bind value " +
                   std::to_string(operands[static_cast<std::size_t>(operand)]) +
                   " twice (one binding per value in a WebGPU dispatch)");
      }
    }
  }
  return lowered;
}

}  // namespace websd::webgpu
