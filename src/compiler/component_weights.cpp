#include "compiler/component_weights.h"

#include "core/error.h"

namespace websd::compiler {

ComponentWeights::ComponentWeights(const CheckpointComponent& component, const std::vector<ParamSpec>& expected)
    : component_(component) {
  for (const BoundParam& param : component.bind(expected)) shapes_.emplace(param.spec.name, param.spec.shape);
}

std::vector<float> ComponentWeights::read_parameter(const std::string& function, const std::string& name,
                                                    const Shape& shape) const {
  const auto bound = shapes_.find(name);
  if (bound == shapes_.end()) {
    throw Error("engine", function + ": graph weight '" + name + "' is not a parameter of " + component_.name() +
                              " (the graph builder and the parameter list disagree: a websd bug, please report it)");
  }
  if (bound->second != shape) {
    throw Error("engine", function + ": graph weight '" + name + "' has shape " + shape_to_string(shape) + " but " +
                              component_.name() + " holds " + shape_to_string(bound->second) +
                              " (a websd bug, please report it)");
  }
  std::vector<float> values(static_cast<std::size_t>(shape_numel(shape)));
  component_.read_f32_into(name, values);
  // The float32 copy is what the executors use: drop the mapped file pages it came from (and a
  // 2 MiB margin, since the kernel maps page-cache folios around a fault) so peak memory holds
  // each weight once, not twice.
  const TensorLocation& location = component_.at(name);
  constexpr std::uint64_t kMargin = 2u << 20;
  location.file->release_data_pages(location.entry->begin > kMargin ? location.entry->begin - kMargin : 0,
                                    location.entry->end + kMargin);
  return values;
}

std::shared_ptr<std::vector<float>> ComponentWeights::get(const std::string& function, const std::string& name,
                                                          const Shape& shape, const WeightLayout* packing) {
  const std::string key = packing ? name + "@" + packing->name : name;
  if (const auto found = loaded_.find(key); found != loaded_.end()) return found->second;
  std::vector<float> values = read_parameter(function, name, shape);
  auto storage = std::make_shared<std::vector<float>>(packing ? packing->pack(values) : std::move(values));
  loaded_.emplace(key, storage);
  return storage;
}

std::shared_ptr<std::vector<float>> ComponentWeights::get(const std::string& function,
                                                          const passes::WeightRecipe& recipe,
                                                          const WeightLayout* packing) {
  if (recipe.kind == passes::WeightRecipe::Kind::kCopy && recipe.sources.size() == 1) {
    return get(function, recipe.sources[0].name, recipe.type.shape, packing);
  }
  const std::string key = loaded_key(recipe, packing);
  if (const auto found = loaded_.find(key); found != loaded_.end()) return found->second;
  std::vector<float> values = passes::weight_recipe_materialize(recipe, [&](const std::string& name) {
    for (const auto& source : recipe.sources) {
      if (source.name == name) return read_parameter(function, name, source.type.shape);
    }
    throw Error("engine",
                function + ": weight recipe '" + recipe.name + "' reads '" + name + "', not one of its sources");
  });
  auto storage = std::make_shared<std::vector<float>>(packing ? packing->pack(values) : std::move(values));
  loaded_.emplace(key, storage);
  return storage;
}

void ComponentWeights::forget(const passes::WeightRecipe& recipe, const WeightLayout* packing) {
  loaded_.erase(loaded_key(recipe, packing));
}

std::string ComponentWeights::loaded_key(const passes::WeightRecipe& recipe, const WeightLayout* packing) {
  // A copy of one parameter is kept under the parameter's name (get by name shares it).
  const bool copy = recipe.kind == passes::WeightRecipe::Kind::kCopy && recipe.sources.size() == 1;
  const std::string& name = copy ? recipe.sources[0].name : recipe.name;
  return packing ? name + "@" + packing->name : name;
}

}  // namespace websd::compiler
