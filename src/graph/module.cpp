#include "graph/module.h"

#include "core/error.h"

namespace websd::graph {

Function& Module::add_function(Function function, const std::string& origin) {
  const std::string symbol = function.symbol();
  const auto existing = origins_.find(symbol);
  if (existing != origins_.end()) {
    throw Error("graph", "module already has a function '" + symbol + "' (from " + existing->second +
                             "); cannot add another from " + origin + ": give it a unique symbol");
  }
  origins_.emplace(symbol, origin);
  functions_.push_back(std::make_unique<Function>(std::move(function)));
  return *functions_.back();
}

const Function* Module::find(const std::string& symbol) const {
  for (const auto& function : functions_) {
    if (function->symbol() == symbol) return function.get();
  }
  return nullptr;
}

const Function& Module::at(const std::string& symbol) const {
  const Function* function = find(symbol);
  if (function == nullptr) throw Error("graph", "module has no function '" + symbol + "'");
  return *function;
}

std::vector<const Function*> Module::functions() const {
  std::vector<const Function*> list;
  for (const auto& function : functions_) list.push_back(function.get());
  return list;
}

const std::string& Module::origin(const std::string& symbol) const {
  const auto it = origins_.find(symbol);
  if (it == origins_.end()) throw Error("graph", "module has no function '" + symbol + "'");
  return it->second;
}

}  // namespace websd::graph
