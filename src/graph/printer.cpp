#include "graph/printer.h"

#include "graph/op_registry.h"

namespace websd::graph {
namespace {

std::string ref(ValueId id) { return "%" + std::to_string(id); }

}  // namespace

std::string print_function(const Function& function) {
  std::string text = "func @" + function.symbol() + "(";
  for (std::size_t i = 0; i < function.inputs().size(); ++i) {
    const ValueId id = function.inputs()[i];
    const Value& value = function.value(id);
    text += (i ? ", " : "") + ref(id) + ": " + value.type.to_string() + " \"" + value.name + "\"";
  }
  text += ") {\n";
  for (const ValueId id : function.weights()) {
    const Value& value = function.value(id);
    text += "  weight " + ref(id) + ": " + value.type.to_string() + " \"" + value.name + "\"\n";
  }
  for (const Node& node : function.nodes()) {
    std::string outputs;
    for (const ValueId id : node.outputs) outputs += (outputs.empty() ? "" : ", ") + ref(id);
    std::string inputs;
    for (const ValueId id : node.inputs) inputs += (inputs.empty() ? "" : ", ") + ref(id);
    std::string types;
    for (const ValueId id : node.outputs) types += (types.empty() ? "" : ", ") + function.value(id).type.to_string();
    text += "  " + outputs + " = " + node.op->name + "(" + inputs + ")";
    if (!node.attrs.entries().empty()) text += " {" + node.attrs.to_string() + "}";
    text += " : " + types + "\n";
  }
  std::string outputs;
  for (const ValueId id : function.outputs()) outputs += (outputs.empty() ? "" : ", ") + ref(id);
  return text + "  return " + outputs + "\n}\n";
}

std::string print_module(const Module& module) {
  std::string text;
  for (const Function* function : module.functions()) text += print_function(*function) + "\n";
  return text;
}

}  // namespace websd::graph
