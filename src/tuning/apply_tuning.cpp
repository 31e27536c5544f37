#include "tuning/apply_tuning.h"

#include "core/error.h"
#include "graph/op_registry.h"
#include "tuning/workload.h"

namespace websd::tuning {
namespace {

// The node with the record's parameters set as attributes, checked by the op's own inference.
graph::Node tuned_node(const graph::Function& function, const graph::Node& node, const TuningRecord& record) {
  const std::string where = record.origin.empty() ? "record for " + record.workload : record.origin;
  graph::Node tuned = node;
  for (const auto& [name, value] : record.params) {
    if (name != kBlockRowsParam) {
      throw Error("tuning", where + ": parameter '" + name + "' is not tunable for op '" + node.op->name +
                                "' (expected " + kBlockRowsParam + "; re-run `websd tune`, or delete the line)");
    }
    tuned.attrs.set(name, value);
  }
  std::vector<TensorType> input_types;
  for (const auto id : node.inputs) input_types.push_back(function.value(id).type);
  try {
    node.op->infer(input_types, tuned.attrs);
  } catch (const Error& error) {
    throw Error("tuning", where + ": parameters do not fit op '" + node.op->name + "' of " + function.symbol() + ": " +
                              error.message() + " (re-run `websd tune`, or delete the line)");
  }
  return tuned;
}

}  // namespace

TunedFunction apply_tuning(const graph::Function& function, const TuningDb* db, const std::string& target,
                           const std::string& device) {
  std::vector<graph::Node> nodes = function.nodes();
  std::size_t tuned = 0, tunable = 0;
  for (auto& node : nodes) {
    const auto workload = attention_workload(function, node);
    if (!workload) continue;
    ++tunable;
    const TuningRecord* record = db != nullptr ? db->find(workload->key(), target, device) : nullptr;
    if (record == nullptr) continue;
    node = tuned_node(function, node, *record);
    ++tuned;
  }
  if (tuned == 0) return {function, 0, tunable};
  // Attributes that the op accepted change no value type, so the values stay as they are.
  return {graph::Function::from_parts(function.symbol(), function.values(), std::move(nodes), function.inputs(),
                                      function.weights(), function.outputs()),
          tuned, tunable};
}

std::string tuning_summary(std::size_t tuned_count, std::size_t tunable_count, const std::string& db_path) {
  return "tuning: " + std::to_string(tuned_count) + " of " + std::to_string(tunable_count) +
         " tunable kernels have records in " + db_path;
}

}  // namespace websd::tuning
