// WGSL for a `fused_elementwise` node (ops/fused_program.h): one thread per output element; the
// element index is split over the merged loop nest (ops::fused_loop_nest) to find each input's
// element (broadcast dimensions have stride 0); the postfix program becomes straight-line f32
// code, one `let` per instruction. Semantics follow the CPU interpreter: GELU exact through
// erf_f32 (kernels/common/erf.wgsl), sigmoid 1/(1+exp(-x)), SiLU x*sigmoid(x), QuickGELU
// x*sigmoid(1.702x), tanh of x clamped to +-15 (WGSL's tanh may give NaN for large |x| where
// tanh is +-1 in f32 anyway), min/max as WGSL's. Pure; thread-safe.
#pragma once

#include <vector>

#include "core/tensor_type.h"
#include "ops/fused_program.h"
#include "targets/webgpu/codegen/wgsl_generated_kernels.h"

namespace websd::webgpu {

// Throws websd::Error("codegen") for non-f32 operands, more than 7 inputs (8 storage bindings per
// stage by default, one for the output) or inputs that do not broadcast to `output`.
GeneratedWgsl fused_elementwise_wgsl(const ops::FusedProgram& program, const std::vector<TensorType>& inputs,
                                     const TensorType& output);

}  // namespace websd::webgpu
