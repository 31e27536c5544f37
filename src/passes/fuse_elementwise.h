// Pass: turns every float elementwise op into part of a `fused_elementwise` node (see
// graph/fused_program.h), the unit that codegen lowers to one generated kernel. A producer joins its
// consumer's group when nothing else reads its result (one use, not a function output) and it has
// as many elements as the group's output, so fusion never recomputes a small operand once per
// element of a broadcast. Fusable ops: neg, exp, sqrt, rsqrt, sin, cos, tanh, sigmoid, silu, gelu,
// quick_gelu, clamp, add, sub, mul, div, and fused_elementwise itself (so the pass may run twice),
// when all their operands and result share one float dtype. Single ops become groups of one.
// Scalar `constant` nodes that a group reads become immediates of its program (a constant node
// left without readers is dropped) unless that would change the group's output shape. Everything
// else (cast, reshape, matmul, ...) is left alone. The group's node takes its root's place; kernel
// names are "<symbol>_fused_elementwise_<k>" (symbol with non-identifier characters as '_', k
// counting from 0 in node order), unique within a module whose symbols stay distinct that way.
// Run it after the target's layout and fusion passes (for CPU: lower_composites, channels_last,
// fuse_conv_residual, fuse_norm_activation). Pure: returns a new function.
#pragma once

#include <cstddef>

#include "graph/function.h"
#include "ops/fused_program.h"

namespace websd::passes {

// A group reads at most `max_inputs` distinct values (a target's storage bindings per kernel, less
// the output: WebGPU offers 8 by default); producers that would exceed it stay out of the group.
graph::Function fuse_elementwise(const graph::Function& function, std::size_t max_inputs = ops::kFusedMaxInputs);

}  // namespace websd::passes
