// Lowers a function compiled for a target, with its memory plan, to the launch list the runtime
// runs (runtime/launch_list.h): reshapes become views (no launch), every other node one launch in
// node order of the kernel the target chooses for it (one kernel table entry per distinct kernel),
// intermediates placed at the plan's arenas and offsets, weights referenced by the artifact tensor
// that holds them. Pure.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/function.h"
#include "passes/memory_plan.h"
#include "runtime/launch_list.h"

namespace websd::passes {

// Ops whose output is a view of their input (no launch, no kernel on any target): reshape.
bool lowers_to_view(const std::string& op);

// The kernel a target runs a node with. Its bindings are the node's inputs (read) then its
// outputs (write), in order.
using KernelChooser = std::function<runtime::Kernel(const graph::Node& node)>;
// The target runtime's built-in kernel for the node's op (named "<op>/<binding count>").
runtime::Kernel builtin_kernel(const graph::Node& node);

// `weights` is parallel to function.weights(): the artifact tensor (and packing) of each. Throws
// websd::Error("compiler") when two different kernels get the same table name.
runtime::LaunchList lower_to_launch_list(const graph::Function& function, const MemoryPlan& plan,
                                         std::vector<runtime::LaunchWeight> weights,
                                         const KernelChooser& choose_kernel = builtin_kernel);

}  // namespace websd::passes
