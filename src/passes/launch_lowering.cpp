#include "passes/launch_lowering.h"

#include <algorithm>

#include "core/error.h"
#include "graph/op_registry.h"

namespace websd::passes {
namespace {

std::int64_t index_in(const std::vector<graph::ValueId>& ids, graph::ValueId id) {
  return std::find(ids.begin(), ids.end(), id) - ids.begin();
}

}  // namespace

bool lowers_to_view(const std::string& op) { return op == "reshape"; }

runtime::LaunchList lower_to_launch_list(const graph::Function& function, const MemoryPlan& plan,
                                         std::vector<runtime::LaunchWeight> weights) {
  if (weights.size() != function.weights().size()) {
    throw Error("compiler", function.symbol() + ": " + std::to_string(weights.size()) + " weight placements for " +
                                std::to_string(function.weights().size()) + " weights");
  }
  runtime::LaunchList list;
  list.symbol = function.symbol();
  list.arena_bytes = plan.arena_bytes;
  list.peak_bytes = plan.peak_live_bytes;
  list.unplanned_bytes = plan.unplanned_bytes;
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
    if (node.outputs.size() != 1) {
      throw Error("compiler", function.symbol() + ": op '" + node.op->name + "' has " +
                                  std::to_string(node.outputs.size()) + " outputs; launches write one");
    }
    runtime::Launch launch;
    launch.op = node.op->name;
    if (node.op->name == "fused_elementwise") launch.kernel = node.attrs.get_string("kernel", node.op->name);
    launch.attrs = node.attrs;
    launch.inputs = node.inputs;
    launch.output = node.outputs[0];
    list.launches.push_back(std::move(launch));
  }
  return list;
}

}  // namespace websd::passes
