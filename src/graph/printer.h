// Writes graph IR as readable text, one line per input, weight and node:
//   func @clip(%0: i64[1,77] "input_ids") {
//     weight %1: f32[49408,768] "text_model.embeddings.token_embedding.weight"
//     %2 = gather_rows(%1, %0) : f32[1,77,768]
//     return %2
//   }
#pragma once

#include <string>

#include "graph/function.h"
#include "graph/module.h"

namespace websd::graph {

std::string print_function(const Function& function);
std::string print_module(const Module& module);

}  // namespace websd::graph
