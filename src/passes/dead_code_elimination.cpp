#include "passes/dead_code_elimination.h"

#include "graph/op_registry.h"

namespace websd::passes {

DeadCodeResult eliminate_dead_code(const graph::Function& function) {
  // Walk nodes backwards: a node is live if any of its outputs is needed; its inputs then are too.
  std::vector<bool> needed(function.values().size(), false);
  for (const graph::ValueId id : function.outputs()) needed[id] = true;
  std::vector<bool> live_node(function.nodes().size(), false);
  for (std::size_t i = function.nodes().size(); i-- > 0;) {
    const graph::Node& node = function.nodes()[i];
    for (const graph::ValueId id : node.outputs) live_node[i] = live_node[i] || needed[id];
    if (!live_node[i]) continue;
    for (const graph::ValueId id : node.inputs) needed[id] = true;
  }

  DeadCodeResult result{graph::Function(function.symbol()), 0, {}};
  graph::Function& target = result.function;
  std::vector<graph::ValueId> mapped(function.values().size(), -1);
  for (const graph::ValueId id : function.inputs())
    mapped[id] = target.add_input(function.value(id).name, function.value(id).type);
  for (const graph::ValueId id : function.weights()) {
    const graph::Value& weight = function.value(id);
    if (needed[id]) {
      mapped[id] = target.add_weight(weight.name, weight.type);
    } else {
      result.removed_weights.push_back(weight.name);
    }
  }
  for (std::size_t i = 0; i < function.nodes().size(); ++i) {
    const graph::Node& node = function.nodes()[i];
    if (!live_node[i]) {
      ++result.removed_nodes;
      continue;
    }
    std::vector<graph::ValueId> inputs;
    for (const graph::ValueId id : node.inputs) inputs.push_back(mapped[id]);
    const std::vector<graph::ValueId> outputs = target.add_node(node.op->name, inputs, node.attrs);
    for (std::size_t k = 0; k < outputs.size(); ++k) mapped[node.outputs[k]] = outputs[k];
  }
  std::vector<graph::ValueId> outputs;
  for (const graph::ValueId id : function.outputs()) outputs.push_back(mapped[id]);
  target.set_outputs(std::move(outputs));
  return result;
}

}  // namespace websd::passes
