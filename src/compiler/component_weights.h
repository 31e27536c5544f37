// The float32 weights of one checkpoint component, as a target's executors read them. Construction
// checks the whole component against the network's parameter list (CheckpointComponent::bind: every
// missing, unexpected or wrong-shape tensor in one websd::Error naming the file); each tensor is
// then read and upcast (and packed into a target's WeightLayout, if a kernel asks) once, on first
// request, and the same storage is shared by every executor (of every shape) that asks for it.
// Borrows the component, which must outlive it. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/target.h"
#include "core/host_tensor.h"
#include "core/param_spec.h"
#include "import/checkpoint_component.h"
#include "passes/weight_recipe.h"

namespace websd::compiler {

class ComponentWeights {
 public:
  ComponentWeights(const CheckpointComponent& component, const std::vector<ParamSpec>& expected);

  // The storage of parameter `name` (canonical), which a graph expects of `shape`, packed by
  // `packing` when given (then only the packed form is kept); `function` names the graph in errors.
  // Throws websd::Error if the parameter list has no such tensor or another shape.
  std::shared_ptr<std::vector<float>> get(const std::string& function, const std::string& name, const Shape& shape,
                                          const WeightLayout* packing = nullptr);
  // The storage of a weight that a compiled function reads, made by `recipe` (passes/weight_recipe.h):
  // a copy of one parameter as above, or parameters joined (merge_qkv's merged projections; the
  // parts are read for it and not kept), packed by `packing` when given. Kept under the recipe's
  // name like a parameter. Throws websd::Error like get() for a source that is not a parameter.
  std::shared_ptr<std::vector<float>> get(const std::string& function, const passes::WeightRecipe& recipe,
                                          const WeightLayout* packing = nullptr);

  // Drops the storage get(function, recipe, packing) keeps, if any: for a caller that keeps its own
  // narrower copy of it (bf16), so the float32 values are not held beside it.
  void forget(const passes::WeightRecipe& recipe, const WeightLayout* packing);

  // Tensors held now.
  std::size_t loaded_count() const { return loaded_.size(); }
  // Drops every tensor held (storage shared with executors lives on until they go too).
  void release() { loaded_.clear(); }

 private:
  // Where get() keeps the storage of `recipe` packed by `packing`.
  static std::string loaded_key(const passes::WeightRecipe& recipe, const WeightLayout* packing);
  // Parameter `name`'s float32 values, read from the checkpoint (its mapped pages dropped after).
  std::vector<float> read_parameter(const std::string& function, const std::string& name, const Shape& shape) const;

  const CheckpointComponent& component_;
  std::map<std::string, Shape, std::less<>> shapes_;                                // every bound parameter
  std::map<std::string, std::shared_ptr<std::vector<float>>, std::less<>> loaded_;  // by name and packing
};

}  // namespace websd::compiler
