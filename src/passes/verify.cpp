#include "passes/verify.h"

#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "graph/op_registry.h"

namespace websd::passes {
namespace {

using graph::Function;
using graph::Node;
using graph::Value;
using graph::ValueId;
using graph::ValueKind;

// Built by append: GCC 12 warns falsely (-Wrestrict) on "%" + std::to_string(id) here.
std::string ref(ValueId id) { return std::string("%").append(std::to_string(id)); }

[[noreturn]] void fail(const Function& function, const std::string& where, const std::string& problem) {
  throw Error("verify", "function '" + function.symbol() + "' " + where + ": " + problem);
}

bool in_range(const Function& function, ValueId id) {
  return id >= 0 && id < static_cast<ValueId>(function.values().size());
}

// Checks one list of parameters (inputs or weights): ids exist, have `kind`, names non-empty and unique.
void verify_parameters(const Function& function, const std::vector<ValueId>& ids, ValueKind kind, const char* what) {
  std::set<std::string> names;
  for (const ValueId id : ids) {
    const std::string where = std::string(what) + " " + ref(id);
    if (!in_range(function, id))
      fail(function, where,
           "does not exist (the function has " + std::to_string(function.values().size()) + " values)");
    const Value& value = function.values()[id];
    if (value.kind != kind) fail(function, where, "is listed as " + std::string(what) + " but is not one");
    if (value.name.empty()) fail(function, where, "has an empty name (every " + std::string(what) + " needs one)");
    if (!names.insert(value.name).second) fail(function, where, "name '" + value.name + "' is used twice");
  }
}

// Every value of `kind` must appear in the matching list, so that nothing unbound is read.
void verify_listed(const Function& function, const std::vector<ValueId>& ids, ValueKind kind, const char* what) {
  const std::set<ValueId> listed(ids.begin(), ids.end());
  for (ValueId id = 0; id < static_cast<ValueId>(function.values().size()); ++id) {
    if (function.values()[id].kind == kind && listed.count(id) == 0) {
      fail(function, "value " + ref(id),
           "has kind " + std::string(what) + " but is missing from the " + what + " list");
    }
  }
}

void verify_node(const Function& function, std::size_t index, std::vector<bool>& defined) {
  const Node& node = function.nodes()[index];
  if (node.op == nullptr) fail(function, "node " + std::to_string(index), "has no op");
  const std::string where = "node " + std::to_string(index) + " (" + node.op->name + ")";
  const graph::OpDef* registered = nullptr;
  try {
    registered = &graph::op_lookup(node.op->name);
  } catch (const Error&) {
    fail(function, where, "op is not registered");
  }
  if (registered != node.op) fail(function, where, "op is not the registered definition of '" + node.op->name + "'");
  const int count = static_cast<int>(node.inputs.size());
  if (count < node.op->min_inputs || count > node.op->max_inputs) {
    fail(function, where,
         "has " + std::to_string(count) + " inputs, the op takes " + std::to_string(node.op->min_inputs) + ".." +
             std::to_string(node.op->max_inputs));
  }
  std::vector<TensorType> input_types;
  for (const ValueId id : node.inputs) {
    if (!in_range(function, id)) fail(function, where, "input " + ref(id) + " does not exist");
    if (!defined[id]) fail(function, where, "input " + ref(id) + " is used before the node that defines it");
    input_types.push_back(function.values()[id].type);
  }
  std::vector<TensorType> inferred;
  try {
    inferred = node.op->infer(input_types, node.attrs);
  } catch (const Error& error) {
    fail(function, where, "type inference fails: " + error.message());
  }
  if (inferred.size() != node.outputs.size()) {
    fail(function, where,
         "has " + std::to_string(node.outputs.size()) + " outputs, inference gives " + std::to_string(inferred.size()));
  }
  for (std::size_t i = 0; i < node.outputs.size(); ++i) {
    const ValueId id = node.outputs[i];
    if (!in_range(function, id)) fail(function, where, "output " + ref(id) + " does not exist");
    const Value& value = function.values()[id];
    if (value.kind != ValueKind::kNode || value.node != static_cast<std::int32_t>(index)) {
      fail(function, where, "output " + ref(id) + " does not name this node as its producer");
    }
    if (defined[id]) fail(function, where, "output " + ref(id) + " is defined a second time");
    if (value.type != inferred[i]) {
      fail(function, where,
           "output " + ref(id) + " has type " + value.type.to_string() + " but inference gives " +
               inferred[i].to_string());
    }
    defined[id] = true;
  }
}

}  // namespace

void verify(const Function& function) {
  if (function.symbol().empty()) throw Error("verify", "a function has an empty symbol (every function needs one)");
  verify_parameters(function, function.inputs(), ValueKind::kInput, "input");
  verify_parameters(function, function.weights(), ValueKind::kWeight, "weight");
  verify_listed(function, function.inputs(), ValueKind::kInput, "input");
  verify_listed(function, function.weights(), ValueKind::kWeight, "weight");
  std::vector<bool> defined(function.values().size(), false);
  for (const ValueId id : function.inputs()) defined[id] = true;
  for (const ValueId id : function.weights()) defined[id] = true;
  for (std::size_t index = 0; index < function.nodes().size(); ++index) verify_node(function, index, defined);
  for (ValueId id = 0; id < static_cast<ValueId>(function.values().size()); ++id) {
    if (!defined[id]) fail(function, "value " + ref(id), "is produced by no node");
  }
  if (function.outputs().empty()) fail(function, "outputs", "none (a function must return something)");
  for (const ValueId id : function.outputs()) {
    if (!in_range(function, id)) fail(function, "output " + ref(id), "does not exist");
  }
}

void verify(const graph::Module& module) {
  std::set<std::string> symbols;
  for (const Function* function : module.functions()) {
    if (!symbols.insert(function->symbol()).second) {
      throw Error("verify", "module has two functions '" + function->symbol() + "' (give each a unique symbol)");
    }
    verify(*function);
  }
}

}  // namespace websd::passes
