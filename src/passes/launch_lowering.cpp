#include "passes/launch_lowering.h"

#include <algorithm>
#include <tuple>

#include "core/error.h"
#include "graph/op_registry.h"

namespace websd::passes {
namespace {

std::int64_t index_in(const std::vector<graph::ValueId>& ids, graph::ValueId id) {
  return std::find(ids.begin(), ids.end(), id) - ids.begin();
}

bool same_kernel(const runtime::Kernel& a, const runtime::Kernel& b) {
  const auto fields = [](const runtime::Kernel& k) {
    return std::tie(k.name, k.source, k.entry, k.file, k.workgroup_size, k.bindings, k.uniforms, k.uniform_bytes);
  };
  return fields(a) == fields(b);
}

}  // namespace

runtime::Kernel builtin_kernel(const graph::Node& node) {
  runtime::Kernel kernel;
  kernel.entry = node.op->name;
  kernel.bindings.assign(node.inputs.size(), runtime::Access::kRead);
  kernel.bindings.insert(kernel.bindings.end(), node.outputs.size(), runtime::Access::kWrite);
  kernel.name = kernel.entry + "/" + std::to_string(kernel.bindings.size());
  return kernel;
}

bool lowers_to_view(const std::string& op) { return op == "reshape"; }

runtime::LaunchList lower_to_launch_list(const graph::Function& function, const MemoryPlan& plan,
                                         std::vector<runtime::LaunchWeight> weights,
                                         const KernelChooser& choose_kernel) {
  if (weights.size() != function.weights().size()) {
    throw Error("compiler", function.symbol() + ": " + std::to_string(weights.size()) + " weight placements for " +
                                std::to_string(function.weights().size()) + " weights");
  }
  runtime::LaunchList list;
  list.symbol = function.symbol();
  list.memory.alignment = plan.limits.alignment;
  list.memory.max_buffer_bytes = plan.limits.max_buffer_bytes;
  list.memory.arenas = plan.arenas;
  list.memory.peak_bytes = plan.peak_live_bytes;
  list.memory.unplanned_bytes = plan.unplanned_bytes;
  list.weights = std::move(weights);
  for (std::size_t id = 0; id < function.values().size(); ++id) {
    const ValuePlacement& placement = plan.values[id];
    runtime::LaunchValue value;
    value.type = function.values()[id].type;
    switch (placement.storage) {
      case Storage::kInput:
        value.placement = runtime::Placement::kInput;
        value.index = index_in(function.inputs(), placement.buffer);
        break;
      case Storage::kWeight:
        value.placement = runtime::Placement::kWeight;
        value.index = index_in(function.weights(), placement.buffer);
        break;
      case Storage::kArena:
        value.placement = runtime::Placement::kArena;
        value.arena = placement.arena;
        value.offset = placement.offset;
        if (placement.buffer != static_cast<graph::ValueId>(id)) value.view_of = placement.buffer;
        break;
    }
    list.values.push_back(std::move(value));
  }
  for (const auto id : function.inputs()) {
    list.inputs.push_back(id);
    list.input_names.push_back(function.value(id).name);
  }
  list.outputs = function.outputs();
  for (const auto& node : function.nodes()) {
    if (lowers_to_view(node.op->name)) continue;  // its value shares its input's bytes
    runtime::Kernel kernel = choose_kernel(node);
    if (kernel.bindings.size() != node.inputs.size() + node.outputs.size()) {
      throw Error("compiler", function.symbol() + ": kernel '" + kernel.name + "' has " +
                                  std::to_string(kernel.bindings.size()) + " binding slots for an '" + node.op->name +
                                  "' node of " + std::to_string(node.inputs.size() + node.outputs.size()) +
                                  " operands");
    }
    const auto known = std::find_if(list.kernels.begin(), list.kernels.end(),
                                    [&](const runtime::Kernel& k) { return k.name == kernel.name; });
    if (known != list.kernels.end() && !same_kernel(*known, kernel)) {
      throw Error("compiler", function.symbol() + ": two different kernels are both named '" + kernel.name + "'");
    }
    runtime::Launch launch;
    launch.kernel = static_cast<std::int32_t>(known - list.kernels.begin());
    if (known == list.kernels.end()) list.kernels.push_back(std::move(kernel));
    launch.attrs = node.attrs;
    for (const auto id : node.inputs) launch.bindings.push_back({id, runtime::Access::kRead});
    for (const auto id : node.outputs) launch.bindings.push_back({id, runtime::Access::kWrite});
    launch.uniforms.resize(static_cast<std::size_t>(list.kernels[launch.kernel].uniform_bytes));
    list.launches.push_back(std::move(launch));
  }
  return list;
}

}  // namespace websd::passes
