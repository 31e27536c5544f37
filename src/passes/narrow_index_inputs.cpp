#include "passes/narrow_index_inputs.h"

#include <algorithm>

#include "graph/op_registry.h"

namespace websd::passes {
namespace {

// Whether every reader of `id` is a gather_rows node reading it as its ids, and it is not an output.
bool only_indexes(const graph::Function& function, graph::ValueId id) {
  const auto& outputs = function.outputs();
  if (std::find(outputs.begin(), outputs.end(), id) != outputs.end()) return false;
  for (const graph::Node& node : function.nodes()) {
    for (std::size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] == id && (node.op->name != "gather_rows" || slot != 1)) return false;
    }
  }
  return true;
}

}  // namespace

graph::Function narrow_index_inputs(const graph::Function& function) {
  graph::Function target(function.symbol());
  std::vector<graph::ValueId> mapped(function.values().size(), -1);
  for (const auto id : function.inputs()) {
    TensorType type = function.value(id).type;
    if (type.dtype == DType::kI64 && only_indexes(function, id)) type.dtype = DType::kI32;
    mapped[id] = target.add_input(function.value(id).name, type);
  }
  for (const auto id : function.weights())
    mapped[id] = target.add_weight(function.value(id).name, function.value(id).type);
  for (const graph::Node& node : function.nodes()) {
    std::vector<graph::ValueId> inputs;
    for (const auto id : node.inputs) inputs.push_back(mapped[id]);
    const auto outputs = target.add_node(node.op->name, inputs, node.attrs);
    for (std::size_t i = 0; i < outputs.size(); ++i) mapped[node.outputs[i]] = outputs[i];
  }
  std::vector<graph::ValueId> outputs;
  for (const auto id : function.outputs()) outputs.push_back(mapped[id]);
  target.set_outputs(std::move(outputs));
  return target;
}

}  // namespace websd::passes
