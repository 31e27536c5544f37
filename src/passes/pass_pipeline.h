// A pass pipeline: a named list of function-to-function passes run in order. After each pass the IR
// can be dumped to `<dump_dir>/<NN>-<pass>.<symbol>.ir` (NN = the pass's 1-based position, two
// digits; `00-input.<symbol>.ir` is the function as given), so a build can be followed step by step.
// A pass that throws is reported by name, position and function, with its own message kept.
// Passes may leave notes for the user (e.g. unused weights that dead-code elimination dropped).
// Pipelines are values; running one is pure apart from the dump files, and thread-safe for
// distinct dump directories.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/function.h"
#include "graph/module.h"

namespace websd::passes {

using PassNotes = std::vector<std::string>;
using PassFn = std::function<graph::Function(const graph::Function& function, PassNotes& notes)>;

struct Pass {
  std::string name;  // lower-case letters, digits and '_' (it becomes part of a file name)
  PassFn run;
};
using Pipeline = std::vector<Pass>;

struct PipelineOptions {
  std::string dump_dir;  // empty: no dumps; created if missing
};

struct PipelineResult {
  graph::Function function;
  PassNotes notes;  // each "<pass>: <symbol>: <note>"
};

struct ModulePipelineResult {
  graph::Module module;  // same symbols, origins and order as the input
  PassNotes notes;
};

PipelineResult run_pipeline(const graph::Function& function, const Pipeline& pipeline,
                            const PipelineOptions& options = {});
ModulePipelineResult run_pipeline(const graph::Module& module, const Pipeline& pipeline,
                                  const PipelineOptions& options = {});

// verify, dce, constant_folding, lower_composites (keeping the composites `keep_composite`
// accepts: the target's fused kernels), verify.
Pipeline default_pipeline(std::function<bool(const std::string&)> keep_composite);

}  // namespace websd::passes
