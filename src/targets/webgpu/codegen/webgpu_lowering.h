// How the webgpu target runs each node of a compiled function: the WGSL module (a specialized
// template of src/targets/webgpu/kernels, or a kernel generated for a fused elementwise program or
// a constant), its launches with their bindings, packed uniforms and dispatch grids (the contract
// in src/targets/webgpu/kernels/README.md), and any workspace. WebGpuTarget::lower_node returns
// the launches; generate_kernels collects the files by lowering every node the same way.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/function.h"
#include "passes/launch_lowering.h"

namespace websd::webgpu {

// The kernel tiers: every function lowered once per tier. f32 runs on every adapter; f16 holds the
// weights of linear layers and convolutions in f16 on the GPU (passes::NodeLaunch::f16_weights:
// half their memory, no widening at load; the arithmetic stays f32) where the adapter offers
// `shader-f16`; subgroup-matrix does that too and runs GEMMs and convolutions on tensor cores (f16
// operands, f32 accumulation) where it also offers `subgroups` and
// `chromium-experimental-subgroup-matrix` (f16 -> f32 16x16x16).
inline constexpr const char* kF32Tier = "f32";
inline constexpr const char* kF16Tier = "f16";
inline constexpr const char* kSubgroupMatrixTier = "subgroup-matrix";
// WebGPU's default maxStorageBufferBindingSize, which every adapter offers.
inline constexpr std::int64_t kMaxBindingBytes = std::int64_t{128} << 20;

struct LoweredNode {
  std::vector<passes::NodeLaunch> launches;
  std::vector<std::pair<std::string, std::string>> files;  // artifact path -> WGSL text
};

// Whether lower_webgpu_node handles op `op` (views, passes::lowers_to_view, are not asked).
bool webgpu_lowers(const std::string& op);
// Whether the attention kernel takes heads of these widths (its tiles fit 16 KiB of workgroup
// memory and split into multiples of 4 per thread); wider ones are split by the pass list
// (passes/split_wide_attention.h).
bool webgpu_attention_fits(std::int64_t head_dim, std::int64_t value_head_dim);

// Throws websd::Error("codegen") naming the function, the op and the attribute or shape that the
// target's kernels do not implement (a concat of more than two inputs, padding with a value other
// than 0, softmax over an axis other than the last, a matmul without transpose_b, a head
// dimension not a multiple of 4 per thread, ...).
// `tier` (kF32Tier, kF16Tier, kSubgroupMatrixTier) picks the kernels of linear layers, matmuls and
// convolutions; a GEMM's split-K workspace stays within `max_buffer_bytes` (the target's buffer limit).
LoweredNode lower_webgpu_node(const graph::Function& function, const graph::Node& node,
                              const std::string& tier = kF32Tier, std::int64_t max_buffer_bytes = kMaxBindingBytes);

}  // namespace websd::webgpu
