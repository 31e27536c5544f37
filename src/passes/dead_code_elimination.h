// Pass: removes nodes whose outputs do not reach a function output, and weights that no remaining
// node reads. Inputs are the function's signature and always stay, used or not. The names of the
// dropped weights are returned, since an unused checkpoint weight usually means a graph that does
// not match its checkpoint and is worth telling the user. Pure and thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "graph/function.h"

namespace websd::passes {

struct DeadCodeResult {
  graph::Function function;
  std::size_t removed_nodes = 0;
  std::vector<std::string> removed_weights;  // checkpoint names, in the function's weight order
};

DeadCodeResult eliminate_dead_code(const graph::Function& function);

}  // namespace websd::passes
