// Pass: expands composite ops (layer_norm, attention, ...) into their primitive decompositions,
// except those `keep` accepts (a target's fused kernels). Repeats until no expandable composite is
// left, since decompositions may use other composites. Pure: returns a new function.
#pragma once

#include <functional>
#include <string>

#include "graph/function.h"

namespace websd::passes {

graph::Function lower_composites(const graph::Function& function, const std::function<bool(const std::string&)>& keep);

}  // namespace websd::passes
