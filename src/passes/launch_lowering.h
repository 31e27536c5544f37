// Lowers a function compiled for a target, with its memory plan, to the launch list the runtime
// runs (runtime/launch_list.h): reshapes become views (no launch), every other node the launches
// the target lowers it to, in node order (one kernel table entry per distinct kernel),
// intermediates placed at the plan's arenas and offsets, weights referenced by the artifact tensor
// that holds them. Nodes' workspaces become values of one extra arena. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "graph/function.h"
#include "passes/memory_plan.h"
#include "runtime/launch_list.h"

namespace websd::passes {

// Ops whose output is a view of their input (no launch, no kernel on any target): reshape.
bool lowers_to_view(const std::string& op);

// A binding slot's operand: an index into the node's inputs then outputs, or the node's workspace.
inline constexpr int kWorkspaceOperand = -1;

// One launch a node lowers to. GPU targets may lower a node to several launches (a multi-pass
// group norm) with packed uniforms, a dispatch grid and scratch memory; the CPU lowers each node
// to one launch of one kernel whose bindings are the node's operands, parameters in `attrs`.
struct NodeLaunch {
  runtime::Kernel kernel;
  // The operand bound to each binding slot of `kernel` (kernel.bindings.size() entries), its
  // access the slot's; empty: the node's inputs then outputs, in order.
  std::vector<int> operands;
  Attrs attrs;
  std::array<std::int64_t, 3> dispatch{1, 1, 1};
  std::vector<std::byte> uniforms;  // kernel.uniform_bytes bytes
  // Scratch shared by the node's launches (the largest of them is reserved); kWorkspaceOperand
  // binds it. Workspaces live in an arena of their own after the plan's, reused by every node.
  std::int64_t workspace_bytes = 0;
  // Operands (weights) the kernel reads as f16: the launch list gives those weights dtype f16, the
  // form the device holds them in (a GPU tier that never widens its weights).
  std::vector<int> f16_weights;
};

// How a target lowers a node of `function` (the types of its operands are the function's).
using NodeLowering = std::function<std::vector<NodeLaunch>(const graph::Function& function, const graph::Node& node)>;

// The target runtime's built-in kernel for the node's op (named "<op>/<binding count>"): its
// bindings are the node's inputs (read) then its outputs (write), in order.
runtime::Kernel builtin_kernel(const graph::Node& node);
// One launch of `kernel` over the node's operands in order, with the node's attributes.
NodeLaunch single_launch(const graph::Node& node, runtime::Kernel kernel);
// single_launch of builtin_kernel: how the CPU runtime runs every op.
std::vector<NodeLaunch> builtin_lowering(const graph::Function& function, const graph::Node& node);

// `weights` is parallel to function.weights(): the artifact tensor (and packing) of each. Throws
// websd::Error("compiler") when two different kernels get the same table name, a launch's
// bindings do not match its kernel, or kernels want one weight in two dtypes (NodeLaunch::f16_weights).
runtime::LaunchList lower_to_launch_list(const graph::Function& function, const MemoryPlan& plan,
                                         std::vector<runtime::LaunchWeight> weights,
                                         const NodeLowering& lower_node = builtin_lowering);

}  // namespace websd::passes
