#include "graph/function.h"

#include "core/error.h"
#include "graph/op_registry.h"

namespace websd::graph {
namespace {

std::string describe_inputs(const std::vector<TensorType>& types) {
  std::string text;
  for (const auto& type : types) text += (text.empty() ? "" : ", ") + type.to_string();
  return "(" + text + ")";
}

}  // namespace

Function::Function(std::string symbol) : symbol_(std::move(symbol)) {
  if (symbol_.empty()) throw Error("graph", "a function needs a non-empty symbol");
}

Function Function::from_parts(std::string symbol, std::vector<Value> values, std::vector<Node> nodes,
                              std::vector<ValueId> inputs, std::vector<ValueId> weights, std::vector<ValueId> outputs) {
  Function function;
  function.symbol_ = std::move(symbol);
  function.values_ = std::move(values);
  function.nodes_ = std::move(nodes);
  function.inputs_ = std::move(inputs);
  function.weights_ = std::move(weights);
  function.outputs_ = std::move(outputs);
  return function;
}

ValueId Function::add_value(Value value) {
  values_.push_back(std::move(value));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Function::add_input(const std::string& name, TensorType type) {
  for (const ValueId id : inputs_) {
    if (values_[id].name == name) throw Error("graph", symbol_ + ": duplicate input '" + name + "'");
  }
  shape_numel(type.shape);  // validates dimensions
  const ValueId id = add_value({std::move(type), ValueKind::kInput, name, -1});
  inputs_.push_back(id);
  return id;
}

ValueId Function::add_weight(const std::string& name, TensorType type) {
  for (const ValueId id : weights_) {
    if (values_[id].name == name) throw Error("graph", symbol_ + ": duplicate weight '" + name + "'");
  }
  shape_numel(type.shape);
  const ValueId id = add_value({std::move(type), ValueKind::kWeight, name, -1});
  weights_.push_back(id);
  return id;
}

std::vector<ValueId> Function::add_node(const std::string& op_name, const std::vector<ValueId>& inputs, Attrs attrs) {
  const OpDef& op = op_lookup(op_name);
  std::vector<TensorType> input_types;
  for (const ValueId id : inputs) {
    if (id < 0 || id >= static_cast<ValueId>(values_.size())) {
      throw Error("graph",
                  symbol_ + ": op '" + op_name + "' uses value %" + std::to_string(id) + " which does not exist");
    }
    input_types.push_back(values_[id].type);
  }
  const int count = static_cast<int>(inputs.size());
  if (count < op.min_inputs || count > op.max_inputs) {
    throw Error("graph", symbol_ + ": op '" + op_name + "' takes " + std::to_string(op.min_inputs) +
                             (op.max_inputs != op.min_inputs ? ".." + std::to_string(op.max_inputs) : "") +
                             " inputs, got " + std::to_string(count));
  }
  std::vector<TensorType> output_types;
  try {
    output_types = op.infer(input_types, attrs);
  } catch (const Error& error) {
    throw Error("graph", symbol_ + ": op '" + op_name + "' on " + describe_inputs(input_types) +
                             (attrs.entries().empty() ? "" : " with " + attrs.to_string()) + ": " + error.message());
  }
  Node node{&op, inputs, std::move(attrs), {}};
  const auto node_index = static_cast<std::int32_t>(nodes_.size());
  for (auto& type : output_types)
    node.outputs.push_back(add_value({std::move(type), ValueKind::kNode, "", node_index}));
  nodes_.push_back(std::move(node));
  return nodes_.back().outputs;
}

void Function::set_outputs(std::vector<ValueId> outputs) {
  for (const ValueId id : outputs) value(id);
  outputs_ = std::move(outputs);
}

const Value& Function::value(ValueId id) const {
  if (id < 0 || id >= static_cast<ValueId>(values_.size())) {
    throw Error("graph", symbol_ + ": value %" + std::to_string(id) + " does not exist");
  }
  return values_[id];
}

}  // namespace websd::graph
