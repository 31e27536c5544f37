#include "compiler/component_weights.h"

#include "core/error.h"

namespace websd::compiler {

ComponentWeights::ComponentWeights(const CheckpointComponent& component, const std::vector<ParamSpec>& expected)
    : component_(component) {
  for (const BoundParam& param : component.bind(expected)) shapes_.emplace(param.spec.name, param.spec.shape);
}

std::shared_ptr<std::vector<float>> ComponentWeights::get(const std::string& function, const std::string& name,
                                                          const Shape& shape, const cpu::WeightPacking* packing) {
  const std::string key = packing ? name + "@" + packing->layout : name;
  if (const auto found = loaded_.find(key); found != loaded_.end()) return found->second;
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
  auto storage = std::make_shared<std::vector<float>>(static_cast<std::size_t>(shape_numel(shape)));
  component_.read_f32_into(name, *storage);
  // The float32 copy is what the executors use: drop the mapped file pages it came from (and a
  // 2 MiB margin, since the kernel maps page-cache folios around a fault) so peak memory holds
  // each weight once, not twice.
  const TensorLocation& location = component_.at(name);
  constexpr std::uint64_t kMargin = 2u << 20;
  location.file->release_data_pages(location.entry->begin > kMargin ? location.entry->begin - kMargin : 0,
                                    location.entry->end + kMargin);
  if (packing) storage = std::make_shared<std::vector<float>>(packing->pack(*storage));
  loaded_.emplace(key, storage);
  return storage;
}

}  // namespace websd::compiler
