// Weight recipes: materialising copies and row concatenations, every consistency check with the
// recipe and source named in its message, and the complete recipe list for a function.
#include "passes/weight_recipe.h"

#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "graph/function_builder.h"
#include "pass_test_support.h"

namespace websd::passes {
namespace {


TensorType f32(Shape shape) { return {DType::kF32, std::move(shape)}; }

WeightSourceReader reader(const std::map<std::string, std::vector<float>>& tensors) {
  return [tensors](const std::string& name) {
    const auto it = tensors.find(name);
    if (it == tensors.end()) throw Error("test", "no tensor " + name);
    return it->second;
  };
}

const std::map<std::string, std::vector<float>> kTensors = {
    {"a.to_q.weight", {1, 2, 3, 4, 5, 6}},  // [2,3]
    {"a.to_k.weight", {7, 8, 9}},           // [1,3]
    {"a.to_v.weight", {10, 11, 12, 13, 14, 15}},
    {"a.to_q.bias", {0.5f, 1.5f}},
    {"a.to_k.bias", {2.5f}},
};

WeightRecipe qkv_recipe() {
  return {"a.to_qkv.weight",
          f32({5, 3}),
          WeightRecipe::Kind::kConcatRows,
          {{"a.to_q.weight", f32({2, 3})}, {"a.to_k.weight", f32({1, 3})}, {"a.to_v.weight", f32({2, 3})}}};
}

TEST(WeightRecipe, ConcatRowsJoinsTheSourcesInOrder) {
  const auto values = weight_recipe_materialize(qkv_recipe(), reader(kTensors));
  EXPECT_EQ(values, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  const WeightRecipe bias{"a.to_qk.bias",
                          f32({3}),
                          WeightRecipe::Kind::kConcatRows,
                          {{"a.to_q.bias", f32({2})}, {"a.to_k.bias", f32({1})}}};
  EXPECT_EQ(weight_recipe_materialize(bias, reader(kTensors)), (std::vector<float>{0.5f, 1.5f, 2.5f}));
}

TEST(WeightRecipe, CopyReturnsTheSource) {
  const WeightRecipe copy{"a.to_k.weight", f32({1, 3}), WeightRecipe::Kind::kCopy, {{"a.to_k.weight", f32({1, 3})}}};
  EXPECT_EQ(weight_recipe_materialize(copy, reader(kTensors)), (std::vector<float>{7, 8, 9}));
  EXPECT_STREQ(weight_recipe_kind_name(WeightRecipe::Kind::kCopy), "copy");
  EXPECT_STREQ(weight_recipe_kind_name(WeightRecipe::Kind::kConcatRows), "concat_rows");
}

TEST(WeightRecipe, RefusesSourcesThatDifferOutsideTheRows) {
  WeightRecipe recipe = qkv_recipe();
  recipe.sources[1].type = f32({1, 4});
  test::expect_error_mentions([&] { weight_recipe_check(recipe); },
                              {"[weights]", "a.to_qkv.weight", "a.to_k.weight", "f32[1,4]", "outside dim 0"});
  recipe.sources[1].type = f32({3});
  test::expect_error_mentions([&] { weight_recipe_check(recipe); }, {"a.to_qkv.weight", "a.to_k.weight", "f32[3]"});
}

TEST(WeightRecipe, RefusesRowsThatDoNotAddUp) {
  WeightRecipe recipe = qkv_recipe();
  recipe.type = f32({6, 3});
  test::expect_error_mentions([&] { weight_recipe_check(recipe); }, {"a.to_qkv.weight", "add up to 5", "needs 6"});
}

TEST(WeightRecipe, RefusesAReaderThatReturnsTheWrongSize) {
  auto tensors = kTensors;
  tensors["a.to_v.weight"].pop_back();
  test::expect_error_mentions([&] { weight_recipe_materialize(qkv_recipe(), reader(tensors)); },
                              {"a.to_qkv.weight", "a.to_v.weight", "needs 6 values", "gave 5"});
}

TEST(WeightRecipe, RefusesMalformedRecipes) {
  WeightRecipe copy{"w", f32({2}), WeightRecipe::Kind::kCopy, {{"x", f32({2})}, {"y", f32({2})}}};
  test::expect_error_mentions([&] { weight_recipe_check(copy); }, {"'w'", "copy", "exactly 1 source, got 2"});
  copy.sources = {{"x", f32({3})}};
  test::expect_error_mentions([&] { weight_recipe_check(copy); }, {"'w'", "source 'x' f32[3]"});
  copy.sources = {{"x", {DType::kF16, {2}}}};
  test::expect_error_mentions([&] { weight_recipe_check(copy); }, {"'w'", "source 'x'", "dtype"});
  copy.sources.clear();
  test::expect_error_mentions([&] { weight_recipe_check(copy); }, {"'w'", "no sources"});
  copy.name.clear();
  test::expect_error_mentions([&] { weight_recipe_check(copy); }, {"name is empty"});
}

TEST(WeightRecipe, RecipesForCoverEveryWeightInOrder) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {4, 3}});
  const auto merged = b.op("linear", {x, b.weight("a.to_qkv.weight", {5, 3})});
  function.set_outputs({b.add(merged, b.weight("bias", {5}))});

  const auto recipes = weight_recipes_for(function, {qkv_recipe()});
  ASSERT_EQ(recipes.size(), 2u);
  EXPECT_EQ(recipes[0].kind, WeightRecipe::Kind::kConcatRows);
  EXPECT_EQ(recipes[0].sources.size(), 3u);
  EXPECT_EQ(recipes[1].name, "bias");
  EXPECT_EQ(recipes[1].kind, WeightRecipe::Kind::kCopy);
  ASSERT_EQ(recipes[1].sources.size(), 1u);
  EXPECT_EQ(recipes[1].sources[0].name, "bias");
  EXPECT_EQ(recipes[1].sources[0].type, f32({5}));
  for (const auto& recipe : recipes) weight_recipe_check(recipe);

  WeightRecipe wrong = qkv_recipe();
  wrong.type = f32({6, 3});
  test::expect_error_mentions([&] { weight_recipes_for(function, {wrong}); },
                              {"a.to_qkv.weight", "function 'f'", "f32[5,3]"});
}

}  // namespace
}  // namespace websd::passes
