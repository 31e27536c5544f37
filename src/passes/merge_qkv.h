// Build-time pass: merges the Q/K/V projections of an attention layer into one GEMM. Groups of 2
// or 3 `linear` nodes that read the SAME input value, whose weights are weights of the function
// read by nothing else, living in the same module ("<parent>.to_q.weight", "<parent>.to_k.weight",
// ...: same parent path and same last name part), of equal dtype, either all without bias or all
// with a bias read by nothing else, become ONE linear over a new weight (the members' weights
// concatenated along rows, in node order; biases likewise) followed by one `slice` of the last axis
// per member, which stands for that member's output. SD's self-attention (to_q/to_k/to_v over the
// normed tokens) merges 3 -> 1, cross-attention's to_k/to_v over the text context 2 -> 1; CLIP's
// and the VAE's biased q/k/v projections merge 3 -> 1 with their biases. Groups of one or of more
// than 3 are left alone (several time_emb_proj layers reading one embedding live in different
// modules, so they never group).
//
// The new weight is named from the members' names: common prefix + differing middles + common
// suffix of their local names, e.g. "<parent>.to_qkv.weight", "<parent>.to_kv.weight",
// "<parent>.qkv_proj.bias"; "_merged" (then "_merged2", ...) is appended if that name is taken.
// It takes the place of the first member's weight in the weight list; the members' original
// weights are no longer weights of the function. Each new weight comes with a recipe (see
// weight_recipe.h) saying how to make it from the checkpoint tensors. Pure and thread-safe.
#pragma once

#include <vector>

#include <functional>
#include <string>

#include "graph/function.h"
#include "passes/pass_pipeline.h"
#include "passes/weight_recipe.h"

namespace websd::passes {

struct MergeQkvResult {
  graph::Function function;
  std::vector<WeightRecipe> recipes;  // one per new weight (and bias), in the function's weight order
};

MergeQkvResult merge_qkv(const graph::Function& function);

// merge_qkv as a step of a target's pass list: notes how many weights it merged and hands each
// function's recipes to `on_recipes` (the build driver materializes the merged weights).
Pass merge_qkv_pass(std::function<void(const std::string& symbol, const std::vector<WeightRecipe>&)> on_recipes);

}  // namespace websd::passes
