// A graph function: typed inputs, weights (parameters bound by checkpoint name), op nodes in
// topological order and outputs. Types are inferred when a node is added, so a Function is always
// well-typed. Built single-threaded; immutable sharing afterwards is safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "core/tensor_type.h"

namespace websd::ops {
struct OpDef;  // ops/op_registry.h
}  // namespace websd::ops

namespace websd::graph {

using ops::OpDef;
using ValueId = std::int32_t;

enum class ValueKind { kInput, kWeight, kNode };

struct Value {
  TensorType type;
  ValueKind kind = ValueKind::kNode;
  std::string name;        // input name, weight's checkpoint key, or empty for node outputs
  std::int32_t node = -1;  // producing node for kNode
};

struct Node {
  const OpDef* op = nullptr;
  std::vector<ValueId> inputs;
  Attrs attrs;
  std::vector<ValueId> outputs;
};

class Function {
 public:
  explicit Function(std::string symbol);
  // Assembles a function from raw parts WITHOUT any check, for readers of serialized IR and for
  // tests of passes::verify, which is what checks such a function before anything uses it.
  static Function from_parts(std::string symbol, std::vector<Value> values, std::vector<Node> nodes,
                             std::vector<ValueId> inputs, std::vector<ValueId> weights, std::vector<ValueId> outputs);

  const std::string& symbol() const { return symbol_; }
  // Names must be unique among the function's inputs and among its weights.
  ValueId add_input(const std::string& name, TensorType type);
  ValueId add_weight(const std::string& name, TensorType type);
  // Appends a node of op `op_name`; infers and returns its output values. A type error names the
  // op, the input types and the disagreement.
  std::vector<ValueId> add_node(const std::string& op_name, const std::vector<ValueId>& inputs, Attrs attrs = {});
  void set_outputs(std::vector<ValueId> outputs);

  const Value& value(ValueId id) const;
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& weights() const { return weights_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

 private:
  Function() = default;
  ValueId add_value(Value value);

  std::string symbol_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> weights_;
  std::vector<ValueId> outputs_;
};

}  // namespace websd::graph
