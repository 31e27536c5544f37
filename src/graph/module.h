// A module: named functions under unique global symbols ("clip", "unet", "vae_decode", ...).
// Adding a function under a symbol that is taken is an error naming both origins. Single-threaded
// while built; read-only sharing afterwards is safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/function.h"

namespace websd::graph {

class Module {
 public:
  // `origin` says where the function came from (e.g. "unet/config.json"); kept for error messages.
  Function& add_function(Function function, const std::string& origin);
  const Function* find(const std::string& symbol) const;
  const Function& at(const std::string& symbol) const;
  // Functions in insertion order.
  std::vector<const Function*> functions() const;
  const std::string& origin(const std::string& symbol) const;

 private:
  std::vector<std::unique_ptr<Function>> functions_;
  std::map<std::string, std::string> origins_;
};

}  // namespace websd::graph
