#include "graph/module_merge.h"

#include <map>
#include <set>
#include <utility>

#include "core/error.h"

namespace websd::graph {
namespace {

using RoleKey = std::pair<std::string, std::string>;  // (origin, symbol)

std::map<RoleKey, std::string> index_roles(const std::vector<ModuleSource>& sources, const MergeOptions& options) {
  std::map<RoleKey, std::string> roles;
  for (const MergeRole& role : options.rename_by_role) {
    const std::string what = "role for '" + role.symbol + "' from " + role.origin;
    if (role.role.empty()) throw Error("merge", what + " is empty (give the function a symbol such as 'unet')");
    bool found = false;
    for (const ModuleSource& source : sources)
      found = found || (source.origin == role.origin && source.module.find(role.symbol));
    if (!found) throw Error("merge", what + " matches no function (check the origin and the symbol)");
    if (!roles.emplace(RoleKey{role.origin, role.symbol}, role.role).second) {
      throw Error("merge", what + " is given twice (keep one)");
    }
  }
  return roles;
}

std::string describe(const std::string& origin, const std::string& symbol, const std::string& merged_symbol) {
  return merged_symbol == symbol ? origin : origin + " (its '" + symbol + "', renamed by role)";
}

}  // namespace

Module merge_modules(const std::vector<ModuleSource>& sources, const MergeOptions& options) {
  std::set<std::string> origins;
  for (const ModuleSource& source : sources) {
    if (!origins.insert(source.origin).second) {
      throw Error("merge", "two modules have the origin '" + source.origin + "' (give each source a distinct origin)");
    }
  }
  const std::map<RoleKey, std::string> roles = index_roles(sources, options);
  Module merged;
  std::map<std::string, std::string> taken;  // merged symbol -> description of its function
  for (const ModuleSource& source : sources) {
    for (const Function* function : source.module.functions()) {
      const auto role = roles.find({source.origin, function->symbol()});
      const std::string symbol = role != roles.end() ? role->second : function->symbol();
      const std::string description = describe(source.origin, function->symbol(), symbol);
      if (const auto clash = taken.find(symbol); clash != taken.end()) {
        throw Error("merge", "two functions would both be '" + symbol + "': one from " + clash->second + ", one from " +
                                 description + " (rename them by role, e.g. {\"" + source.origin + "\", \"" +
                                 function->symbol() + "\", \"<role>\"} in MergeOptions.rename_by_role)");
      }
      taken.emplace(symbol, description);
      Function renamed = Function::from_parts(symbol, function->values(), function->nodes(), function->inputs(),
                                              function->weights(), function->outputs());
      merged.add_function(std::move(renamed), source.origin + " @" + function->symbol());
    }
  }
  return merged;
}

}  // namespace websd::graph
