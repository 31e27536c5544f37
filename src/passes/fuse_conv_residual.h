// Pass: folds `add(conv2d_nhwc(x, w, b), residual)` (either operand order, same shapes, the
// convolution's result read by nothing else) into `conv2d_nhwc(x, w, b, residual)`, whose kernel
// accumulates the convolution into the residual instead of writing a sum in a second pass. The
// fused node takes the add's place. Pure: returns a new function.
#pragma once

#include "graph/function.h"

namespace websd::passes {

graph::Function fuse_conv_residual(const graph::Function& function);

}  // namespace websd::passes
