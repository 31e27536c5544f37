#include "passes/function_rewrite.h"

#include "graph/op_registry.h"

namespace websd::passes {

FunctionRewrite::FunctionRewrite(const graph::Function& source)
    : source_(source), target_(source.symbol()), mapped_(source.values().size(), -1) {
  for (const auto id : source.inputs()) mapped_[id] = target_.add_input(source.value(id).name, source.value(id).type);
  for (const auto id : source.weights()) mapped_[id] = target_.add_weight(source.value(id).name, source.value(id).type);
}

std::vector<graph::ValueId> FunctionRewrite::mapped(const std::vector<graph::ValueId>& source_ids) const {
  std::vector<graph::ValueId> result;
  for (const auto id : source_ids) result.push_back(mapped_[id]);
  return result;
}

std::vector<graph::ValueId> FunctionRewrite::emit_for(const graph::Node& node, const std::string& op,
                                                      const std::vector<graph::ValueId>& target_inputs,
                                                      const Attrs& attrs) {
  const auto outputs = target_.add_node(op, target_inputs, attrs);
  for (std::size_t i = 0; i < outputs.size() && i < node.outputs.size(); ++i) mapped_[node.outputs[i]] = outputs[i];
  return outputs;
}

void FunctionRewrite::copy(const graph::Node& node) { emit_for(node, node.op->name, mapped(node.inputs), node.attrs); }

graph::Function FunctionRewrite::finish() {
  target_.set_outputs(mapped(source_.outputs()));
  return std::move(target_);
}

}  // namespace websd::passes
