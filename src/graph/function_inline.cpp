#include "graph/function_inline.h"

#include "core/error.h"
#include "graph/op_registry.h"

namespace websd::graph {

std::vector<ValueId> inline_function(Function& caller, const Function& callee, const std::vector<ValueId>& arguments) {
  const std::string where = "inlining '" + callee.symbol() + "' into '" + caller.symbol() + "'";
  if (arguments.size() != callee.inputs().size()) {
    throw Error("graph", where + ": " + std::to_string(arguments.size()) + " arguments for " +
                             std::to_string(callee.inputs().size()) + " inputs");
  }
  std::vector<ValueId> mapped(callee.values().size(), -1);
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const Value& input = callee.value(callee.inputs()[i]);
    if (caller.value(arguments[i]).type != input.type) {
      throw Error("graph", where + ": input '" + input.name + "' is " + input.type.to_string() + ", the argument " +
                               caller.value(arguments[i]).type.to_string());
    }
    mapped[callee.inputs()[i]] = arguments[i];
  }
  for (const ValueId id : callee.weights()) {
    const Value& weight = callee.value(id);
    for (const ValueId existing : caller.weights()) {
      if (caller.value(existing).name != weight.name) continue;
      if (caller.value(existing).type != weight.type) {
        throw Error("graph", where + ": weight '" + weight.name + "' is " + weight.type.to_string() + " there and " +
                                 caller.value(existing).type.to_string() + " here");
      }
      mapped[id] = existing;
    }
    if (mapped[id] < 0) mapped[id] = caller.add_weight(weight.name, weight.type);
  }
  for (const Node& node : callee.nodes()) {
    std::vector<ValueId> inputs;
    for (const ValueId id : node.inputs) inputs.push_back(mapped[id]);
    const std::vector<ValueId> outputs = caller.add_node(node.op->name, inputs, node.attrs);
    for (std::size_t o = 0; o < outputs.size(); ++o) mapped[node.outputs[o]] = outputs[o];
  }
  std::vector<ValueId> results;
  for (const ValueId id : callee.outputs()) results.push_back(mapped[id]);
  return results;
}

}  // namespace websd::graph
