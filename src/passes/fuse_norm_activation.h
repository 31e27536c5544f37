// Pass: folds `silu(group_norm_nhwc(x))`, when nothing else reads the norm's result, into one
// `group_norm_nhwc` node with activation "silu", so the activation is applied while the normalised
// values are written instead of in a second pass over memory. Pure: returns a new function.
#pragma once

#include "graph/function.h"

namespace websd::passes {

graph::Function fuse_norm_activation(const graph::Function& function);

}  // namespace websd::passes
