// Lowers a function compiled for a target, with its memory plan, to the launch list the runtime
// runs (runtime/launch_list.h): reshapes become views (no launch), every other node one launch in
// node order, intermediates placed at the plan's arena offsets, weights referenced by the artifact
// tensor that holds them. Pure.
#pragma once

#include <string>
#include <vector>

#include "graph/function.h"
#include "passes/memory_plan.h"
#include "runtime/launch_list.h"

namespace websd::passes {

// Ops whose output is a view of their input (no launch, no kernel on any target): reshape.
bool lowers_to_view(const std::string& op);

// `weights` is parallel to function.weights(): the artifact tensor (and packing) of each.
runtime::LaunchList lower_to_launch_list(const graph::Function& function, const MemoryPlan& plan,
                                         std::vector<runtime::LaunchWeight> weights);

}  // namespace websd::passes
