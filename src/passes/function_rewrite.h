// The skeleton that rewriting passes share: a new function with the source's symbol, inputs and
// weights, a map from source values to target values, node-by-node emission, and outputs mapped at
// the end. Single-threaded; borrows the source function for its lifetime.
#pragma once

#include <string>
#include <vector>

#include "graph/function.h"

namespace websd::passes {

class FunctionRewrite {
 public:
  explicit FunctionRewrite(const graph::Function& source);

  graph::Function& target() { return target_; }
  graph::ValueId mapped(graph::ValueId source_id) const { return mapped_[source_id]; }
  std::vector<graph::ValueId> mapped(const std::vector<graph::ValueId>& source_ids) const;
  // Makes source value `source_id` stand for `target_id` in later nodes and outputs.
  void map(graph::ValueId source_id, graph::ValueId target_id) { mapped_[source_id] = target_id; }
  // Emits `op` over already-mapped target inputs; maps `node`'s outputs to the new outputs.
  std::vector<graph::ValueId> emit_for(const graph::Node& node, const std::string& op,
                                       const std::vector<graph::ValueId>& target_inputs, const Attrs& attrs);
  // Copies `node` unchanged (inputs mapped).
  void copy(const graph::Node& node);
  // Sets the mapped outputs and returns the finished function.
  graph::Function finish();

 private:
  const graph::Function& source_;
  graph::Function target_;
  std::vector<graph::ValueId> mapped_;
};

}  // namespace websd::passes
