// How a weight that a compiled function reads is made from checkpoint tensors, once, at build time:
// copied as it is, or several tensors concatenated along dim 0 (the rows of a [out, in] linear
// weight, the entries of a bias), which is what merging Q/K/V projections needs. Build-time weight
// passes (merge_qkv) return recipes for the weights they create; the artifact writer and test
// weight sources call `weight_recipe_materialize` to produce the float32 values. Recipes are values;
// every function here is pure and thread-safe (as far as `read_source` is).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/function.h"
#include "core/tensor_type.h"

namespace websd::passes {

// One checkpoint tensor a recipe reads, with the type the source graph gave it.
struct WeightRecipeSource {
  std::string name;
  TensorType type;
};

struct WeightRecipe {
  enum class Kind {
    kCopy,        // exactly one source, of the recipe's type
    kConcatRows,  // sources of equal rank and equal dims after the first, joined along dim 0 in order
  };
  std::string name;        // the weight's name in the compiled function
  TensorType type;  // the weight's type in the compiled function
  Kind kind = Kind::kCopy;
  std::vector<WeightRecipeSource> sources;
};

// Reads a source tensor by checkpoint name as row-major float32 values.
using WeightSourceReader = std::function<std::vector<float>(const std::string& name)>;

// "copy" or "concat_rows".
const char* weight_recipe_kind_name(WeightRecipe::Kind kind);

// Checks that the recipe is consistent (kind, source count, dtypes, shapes add up to `type`);
// throws websd::Error("weights", ...) naming the recipe, the source and the disagreement.
void weight_recipe_check(const WeightRecipe& recipe);

// Makes the recipe's float32 values (numel(type) of them, row-major). Checks the recipe first,
// then that every source read holds numel(source type) values; errors name recipe and source.
std::vector<float> weight_recipe_materialize(const WeightRecipe& recipe, const WeightSourceReader& read_source);

// A recipe for every weight of `function`, in its weight order: the one in `known` with the
// weight's name (its type must equal the weight's, else websd::Error), otherwise a copy of the
// checkpoint tensor of that name. What the artifact writer iterates over after build-time passes.
std::vector<WeightRecipe> weight_recipes_for(const graph::Function& function, const std::vector<WeightRecipe>& known);

}  // namespace websd::passes
