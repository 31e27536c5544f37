// Pass: evaluates at compile time the nodes whose inputs are all constants, replacing each such
// chain by one `constant` node that holds its result. The folded set is small on purpose (passes do
// not depend on a target's kernels):
//   - unary elementwise: neg, exp, sqrt, rsqrt, sin, cos, tanh, sigmoid, silu, gelu, clamp;
//   - binary elementwise with numpy broadcasting: add, sub, mul, div;
//   - data movement: reshape, permute, slice, concat.
// Everything else (matmul, softmax, casts, ...) is kept, with its constant inputs emitted as
// constant nodes. Arithmetic is float32, as the targets compute it, and results are stored as the
// f32 values. Nothing that depends on an input or a weight is ever folded, and a result larger
// than `max_elements` stays unfolded so that the IR and the artifact stay small. Constant nodes are
// emitted just before their first remaining user, so constants consumed by folding disappear.
// Pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph/function.h"

namespace websd::passes {

struct ConstantFoldingResult {
  graph::Function function;
  std::size_t folded_nodes = 0;  // nodes evaluated at compile time
};

ConstantFoldingResult fold_constants(const graph::Function& function, std::int64_t max_elements = 1 << 16);

}  // namespace websd::passes
