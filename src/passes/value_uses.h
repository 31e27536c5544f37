// How many times each value of a function is read: by nodes (once per operand slot) and as a
// function output. Fusion passes use it to fold a producer into its consumer only when nothing else
// reads the producer's result. Pure.
#pragma once

#include <vector>

#include "graph/function.h"

namespace websd::passes {

inline std::vector<int> value_uses(const graph::Function& function) {
  std::vector<int> uses(function.values().size(), 0);
  for (const auto& node : function.nodes()) {
    for (const auto id : node.inputs) ++uses[id];
  }
  for (const auto id : function.outputs()) ++uses[id];
  return uses;
}

}  // namespace websd::passes
