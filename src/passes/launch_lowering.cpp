#include "passes/launch_lowering.h"

#include <algorithm>
#include <map>
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

NodeLaunch single_launch(const graph::Node& node, runtime::Kernel kernel) {
  NodeLaunch launch;
  launch.kernel = std::move(kernel);
  launch.attrs = node.attrs;
  launch.uniforms.resize(static_cast<std::size_t>(launch.kernel.uniform_bytes));
  return launch;
}

std::vector<NodeLaunch> builtin_lowering(const graph::Function&, const graph::Node& node) {
  return {single_launch(node, builtin_kernel(node))};
}

runtime::LaunchList lower_to_launch_list(const graph::Function& function, const MemoryPlan& plan,
                                         std::vector<runtime::LaunchWeight> weights, const NodeLowering& lower_node) {
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
  // The dtype each weight's kernels read it in (the function's, or f16 where a kernel asks), by weight index.
  std::map<std::int64_t, DType> weight_dtypes;
  // The workspace arena, appended once the first node asks for scratch and grown to the largest.
  std::int32_t workspace_arena = -1;
  for (const auto& node : function.nodes()) {
    if (lowers_to_view(node.op->name)) continue;  // its value shares its input's bytes
    std::vector<NodeLaunch> launches = lower_node(function, node);
    std::int64_t workspace_bytes = 0;
    for (const NodeLaunch& launch : launches) workspace_bytes = std::max(workspace_bytes, launch.workspace_bytes);
    std::int32_t workspace_value = -1;
    if (workspace_bytes > 0) {
      const std::int64_t aligned =
          (workspace_bytes + plan.limits.alignment - 1) / plan.limits.alignment * plan.limits.alignment;
      if (workspace_arena < 0) {
        workspace_arena = static_cast<std::int32_t>(list.memory.arenas.size());
        list.memory.arenas.push_back(0);
      }
      auto& arena_bytes = list.memory.arenas[static_cast<std::size_t>(workspace_arena)];
      arena_bytes = std::max(arena_bytes, aligned);
      runtime::LaunchValue scratch;
      scratch.type = {DType::kF32, {(workspace_bytes + 3) / 4}};
      scratch.arena = workspace_arena;
      scratch.offset = 0;
      workspace_value = static_cast<std::int32_t>(list.values.size());
      list.values.push_back(std::move(scratch));
    }
    std::vector<graph::ValueId> operands = node.inputs;
    operands.insert(operands.end(), node.outputs.begin(), node.outputs.end());
    for (NodeLaunch& lowered : launches) {
      runtime::Kernel& kernel = lowered.kernel;
      if (lowered.operands.empty()) {
        for (std::size_t o = 0; o < operands.size(); ++o) lowered.operands.push_back(static_cast<int>(o));
      }
      if (kernel.bindings.size() != lowered.operands.size()) {
        throw Error("compiler", function.symbol() + ": kernel '" + kernel.name + "' has " +
                                    std::to_string(kernel.bindings.size()) + " binding slots for an '" + node.op->name +
                                    "' launch binding " + std::to_string(lowered.operands.size()) + " operands");
      }
      if (static_cast<std::int64_t>(lowered.uniforms.size()) != kernel.uniform_bytes) {
        throw Error("compiler", function.symbol() + ": a launch of kernel '" + kernel.name + "' packs " +
                                    std::to_string(lowered.uniforms.size()) + " uniform bytes for its " +
                                    std::to_string(kernel.uniform_bytes));
      }
      runtime::Launch launch;
      for (std::size_t slot = 0; slot < lowered.operands.size(); ++slot) {
        const int operand = lowered.operands[slot];
        const bool workspace = operand == kWorkspaceOperand;
        if ((workspace && workspace_value < 0) ||
            (!workspace && (operand < 0 || static_cast<std::size_t>(operand) >= operands.size()))) {
          throw Error("compiler", function.symbol() + ": kernel '" + kernel.name + "' binds operand " +
                                      std::to_string(operand) + " of an '" + node.op->name + "' node");
        }
        const std::int32_t value = workspace ? workspace_value : static_cast<std::int32_t>(operands[operand]);
        launch.bindings.push_back({value, kernel.bindings[slot]});
        const bool f16 =
            std::find(lowered.f16_weights.begin(), lowered.f16_weights.end(), operand) != lowered.f16_weights.end();
        const runtime::LaunchValue& bound = list.values[static_cast<std::size_t>(value)];
        if (bound.placement != runtime::Placement::kWeight) {
          if (f16) {
            throw Error("compiler", function.symbol() + ": kernel '" + kernel.name + "' reads operand " +
                                        std::to_string(operand) + " of an '" + node.op->name +
                                        "' node as an f16 weight; it is no weight");
          }
          continue;
        }
        const DType wanted = f16 ? DType::kF16 : bound.type.dtype;
        const auto [known_dtype, first] = weight_dtypes.emplace(bound.index, wanted);
        if (!first && known_dtype->second != wanted) {
          throw Error("compiler", function.symbol() + ": weight '" +
                                      list.weights[static_cast<std::size_t>(bound.index)].name + "' is read as " +
                                      dtype_lower_name(known_dtype->second) + " by one kernel and as " +
                                      dtype_lower_name(wanted) + " by kernel '" + kernel.name + "'");
        }
      }
      const auto known = std::find_if(list.kernels.begin(), list.kernels.end(),
                                      [&](const runtime::Kernel& k) { return k.name == kernel.name; });
      if (known != list.kernels.end() && !same_kernel(*known, kernel)) {
        throw Error("compiler", function.symbol() + ": two different kernels are both named '" + kernel.name + "'");
      }
      launch.kernel = static_cast<std::int32_t>(known - list.kernels.begin());
      if (known == list.kernels.end()) list.kernels.push_back(std::move(kernel));
      launch.attrs = std::move(lowered.attrs);
      launch.dispatch = lowered.dispatch;
      launch.uniforms = std::move(lowered.uniforms);
      launch.workspace_bytes = lowered.workspace_bytes;
      list.launches.push_back(std::move(launch));
    }
  }
  for (const auto& [index, dtype] : weight_dtypes) list.weights[static_cast<std::size_t>(index)].type.dtype = dtype;
  for (runtime::LaunchValue& value : list.values) {
    if (value.placement == runtime::Placement::kWeight)
      value.type.dtype = list.weights[static_cast<std::size_t>(value.index)].type.dtype;
  }
  return list;
}

}  // namespace websd::passes
