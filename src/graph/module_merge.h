// Merges the functions of several modules (built or imported separately: text encoder, UNet, VAE,
// small helpers) into one module under unique symbols. The classic failure this prevents: two
// imported functions that both call themselves "main". Policy (MergeOptions): a function may be
// renamed by a role the caller gives for its (module origin, symbol), e.g. {"unet.mod", "main",
// "unet"}; any symbol still shared by two functions after that is an error naming the symbol and
// both origins. Never returns a module with two functions of one symbol. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "graph/module.h"

namespace websd::graph {

struct ModuleSource {
  const Module& module;
  std::string origin;  // where the module came from (a file name), unique among the sources
};

// Rename the function `symbol` of the source with `origin` to `role`.
struct MergeRole {
  std::string origin;
  std::string symbol;
  std::string role;
};

struct MergeOptions {
  std::vector<MergeRole> rename_by_role;  // each must match exactly one function of the sources
};

// Functions keep their sources' order; each merged function's origin reads "<origin> @<symbol>".
// Throws websd::Error("merge", ...) for a symbol clash, a role that matches no function, an empty
// role, two roles for one function, or two sources with one origin.
Module merge_modules(const std::vector<ModuleSource>& sources, const MergeOptions& options = {});

}  // namespace websd::graph
