#include "passes/lower_composites.h"

#include <vector>

#include "graph/function_builder.h"
#include "graph/op_registry.h"

namespace websd::passes {
namespace {

bool expandable(const graph::Node& node, const std::function<bool(const std::string&)>& keep) {
  return node.op->has_trait(graph::kTraitComposite) && !keep(node.op->name);
}

graph::Function lower_once(const graph::Function& source, const std::function<bool(const std::string&)>& keep) {
  graph::Function target(source.symbol());
  graph::FunctionBuilder builder(target);
  std::vector<graph::ValueId> mapped(source.values().size(), -1);
  for (const auto id : source.inputs()) mapped[id] = target.add_input(source.value(id).name, source.value(id).type);
  for (const auto id : source.weights()) mapped[id] = target.add_weight(source.value(id).name, source.value(id).type);
  for (const auto& node : source.nodes()) {
    std::vector<graph::ValueId> inputs;
    for (const auto id : node.inputs) inputs.push_back(mapped[id]);
    const std::vector<graph::ValueId> outputs = expandable(node, keep)
                                                    ? node.op->decompose(builder, inputs, node.attrs)
                                                    : target.add_node(node.op->name, inputs, node.attrs);
    for (std::size_t i = 0; i < outputs.size(); ++i) mapped[node.outputs[i]] = outputs[i];
  }
  std::vector<graph::ValueId> outputs;
  for (const auto id : source.outputs()) outputs.push_back(mapped[id]);
  target.set_outputs(outputs);
  return target;
}

bool needs_lowering(const graph::Function& function, const std::function<bool(const std::string&)>& keep) {
  for (const auto& node : function.nodes()) {
    if (expandable(node, keep)) return true;
  }
  return false;
}

}  // namespace

graph::Function lower_composites(const graph::Function& function, const std::function<bool(const std::string&)>& keep) {
  graph::Function current = lower_once(function, keep);
  while (needs_lowering(current, keep)) current = lower_once(current, keep);
  return current;
}

}  // namespace websd::passes
