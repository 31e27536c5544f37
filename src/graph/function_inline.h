// Builds one function out of another: appends a callee's nodes to a caller, with the callee's
// inputs bound to caller values and its weights to caller weights of the same checkpoint name.
// How the pipeline's fused functions (unet_cfg: the guidance batch, the UNet and the guidance
// combination in one function) reuse the networks' single definitions. Pure apart from `caller`.
#pragma once

#include <vector>

#include "graph/function.h"

namespace websd::graph {

// Appends every node of `callee` to `caller`, reading `arguments[i]` where the callee reads its
// input i (types must match), and the caller's weight of the same name where it reads a weight
// (added when the caller has none; one of another type is an error). Returns the caller values that
// hold the callee's outputs. Throws websd::Error naming both functions on a count or type mismatch.
std::vector<ValueId> inline_function(Function& caller, const Function& callee, const std::vector<ValueId>& arguments);

}  // namespace websd::graph
