// Checking and materialising weight recipes (see weight_recipe.h).
#include "passes/weight_recipe.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace websd::passes {
namespace {

[[noreturn]] void recipe_error(const WeightRecipe& recipe, const std::string& detail) {
  throw Error("weights", "recipe '" + recipe.name + "' (" + weight_recipe_kind_name(recipe.kind) + " -> " +
                             recipe.type.to_string() + "): " + detail);
}

std::string source_label(const WeightRecipeSource& source) {
  return "source '" + source.name + "' " + source.type.to_string();
}

void check_concat_rows(const WeightRecipe& recipe) {
  if (recipe.type.rank() < 1) recipe_error(recipe, "concat_rows needs a result of rank >= 1");
  const Shape& result = recipe.type.shape;
  std::int64_t rows = 0;
  for (const auto& source : recipe.sources) {
    const Shape& shape = source.type.shape;
    if (shape.size() != result.size() || !std::equal(shape.begin() + 1, shape.end(), result.begin() + 1)) {
      recipe_error(recipe, source_label(source) + " does not match the result outside dim 0 (concatenate only rows)");
    }
    if (shape[0] < 0) recipe_error(recipe, source_label(source) + " has a negative dim 0");
    rows += shape[0];
  }
  if (rows != result[0]) {
    recipe_error(recipe, "the sources' rows add up to " + std::to_string(rows) + ", the result needs " +
                             std::to_string(result[0]));
  }
}

}  // namespace

const char* weight_recipe_kind_name(WeightRecipe::Kind kind) {
  switch (kind) {
    case WeightRecipe::Kind::kCopy:
      return "copy";
    case WeightRecipe::Kind::kConcatRows:
      return "concat_rows";
  }
  return "unknown";
}

void weight_recipe_check(const WeightRecipe& recipe) {
  if (recipe.name.empty()) recipe_error(recipe, "the weight name is empty");
  if (recipe.sources.empty()) recipe_error(recipe, "no sources");
  for (const auto& source : recipe.sources) {
    if (source.name.empty()) recipe_error(recipe, "a source has an empty name");
    if (source.type.dtype != recipe.type.dtype) {
      recipe_error(recipe, source_label(source) + " has a different dtype (recipes do not convert dtypes)");
    }
  }
  switch (recipe.kind) {
    case WeightRecipe::Kind::kCopy:
      if (recipe.sources.size() != 1) {
        recipe_error(recipe, "copy needs exactly 1 source, got " + std::to_string(recipe.sources.size()));
      }
      if (recipe.sources[0].type != recipe.type) recipe_error(recipe, source_label(recipe.sources[0]) + " differs");
      return;
    case WeightRecipe::Kind::kConcatRows:
      check_concat_rows(recipe);
      return;
  }
  recipe_error(recipe, "unknown kind " + std::to_string(static_cast<int>(recipe.kind)));
}

std::vector<float> weight_recipe_materialize(const WeightRecipe& recipe, const WeightSourceReader& read_source) {
  weight_recipe_check(recipe);
  std::vector<float> values;
  values.reserve(static_cast<std::size_t>(recipe.type.numel()));
  // Row-major [rows, ...] tensors concatenated along dim 0 are their flat values one after another.
  for (const auto& source : recipe.sources) {
    const std::vector<float> part = read_source(source.name);
    if (static_cast<std::int64_t>(part.size()) != source.type.numel()) {
      recipe_error(recipe, source_label(source) + " needs " + std::to_string(source.type.numel()) +
                               " values, the reader gave " + std::to_string(part.size()) +
                               " (the checkpoint tensor's shape differs from the graph's)");
    }
    values.insert(values.end(), part.begin(), part.end());
  }
  return values;
}

std::vector<WeightRecipe> weight_recipes_for(const graph::Function& function, const std::vector<WeightRecipe>& known) {
  std::map<std::string, const WeightRecipe*> by_name;
  for (const auto& recipe : known) by_name[recipe.name] = &recipe;
  std::vector<WeightRecipe> recipes;
  for (const auto id : function.weights()) {
    const graph::Value& weight = function.value(id);
    const auto it = by_name.find(weight.name);
    if (it == by_name.end()) {
      recipes.push_back({weight.name, weight.type, WeightRecipe::Kind::kCopy, {{weight.name, weight.type}}});
      continue;
    }
    if (it->second->type != weight.type) {
      recipe_error(*it->second, "function '" + function.symbol() + "' reads weight '" + weight.name + "' as " +
                                    weight.type.to_string());
    }
    recipes.push_back(*it->second);
  }
  return recipes;
}

}  // namespace websd::passes
