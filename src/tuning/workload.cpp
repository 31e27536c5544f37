#include "tuning/workload.h"

#include <set>

#include "graph/op_registry.h"

namespace websd::tuning {

std::string AttentionWorkload::key() const {
  return "attention:q=" + q.to_string() + ";k=" + k.to_string() + ";v=" + v.to_string() +
         ";causal=" + (causal ? "1" : "0");
}

std::optional<AttentionWorkload> attention_workload(const graph::Function& function, const graph::Node& node) {
  if (node.op->name != "attention" || node.inputs.size() != 3) return std::nullopt;
  return AttentionWorkload{function.value(node.inputs[0]).type, function.value(node.inputs[1]).type,
                           function.value(node.inputs[2]).type, node.attrs.get_int("causal", 0, "attention") != 0};
}

std::vector<AttentionWorkload> distinct_attention_workloads(const std::vector<const graph::Function*>& functions) {
  std::vector<AttentionWorkload> workloads;
  std::set<std::string> seen;
  for (const graph::Function* function : functions) {
    for (const auto& node : function->nodes()) {
      auto workload = attention_workload(*function, node);
      if (workload && seen.insert(workload->key()).second) workloads.push_back(std::move(*workload));
    }
  }
  return workloads;
}

}  // namespace websd::tuning
