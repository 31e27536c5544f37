#include "passes/pass_pipeline.h"

#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "graph/printer.h"
#include "io/atomic_file.h"
#include "passes/constant_folding.h"
#include "passes/dead_code_elimination.h"
#include "passes/lower_composites.h"
#include "passes/verify.h"

namespace websd::passes {
namespace {

void check_name(const Pass& pass) {
  const bool valid =
      !pass.name.empty() && pass.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
  if (!valid) {
    throw Error("passes", "pass name '" + pass.name + "' is not usable (use lower-case letters, digits and '_')");
  }
  if (!pass.run) throw Error("passes", "pass '" + pass.name + "' has no function to run");
}

void dump(const std::string& dir, int position, const std::string& name, const graph::Function& function) {
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%02d-", position);
  const std::string path = dir + "/" + prefix + name + "." + function.symbol() + ".ir";
  atomic_write_file(path, [&](std::ostream& out) { out << graph::print_function(function); });
}

[[noreturn]] void rethrow_named(const Pass& pass, std::size_t position, std::size_t count, const std::string& symbol,
                                const std::exception& error) {
  throw Error("passes", "pass '" + pass.name + "' (" + std::to_string(position) + " of " + std::to_string(count) +
                            ") failed on function '" + symbol + "': " + error.what());
}

}  // namespace

PipelineResult run_pipeline(const graph::Function& function, const Pipeline& pipeline, const PipelineOptions& options) {
  for (const Pass& pass : pipeline) check_name(pass);
  if (!options.dump_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.dump_dir, error);
    if (error) {
      throw Error("passes", "cannot create the IR dump folder " + options.dump_dir + ": " + error.message() +
                                " (choose a writable path)");
    }
    dump(options.dump_dir, 0, "input", function);
  }
  PipelineResult result{function, {}};
  for (std::size_t i = 0; i < pipeline.size(); ++i) {
    const Pass& pass = pipeline[i];
    PassNotes notes;
    try {
      result.function = pass.run(result.function, notes);
    } catch (const std::exception& error) {
      rethrow_named(pass, i + 1, pipeline.size(), result.function.symbol(), error);
    }
    for (const std::string& note : notes) result.notes.push_back(pass.name + ": " + function.symbol() + ": " + note);
    if (!options.dump_dir.empty()) dump(options.dump_dir, static_cast<int>(i + 1), pass.name, result.function);
  }
  return result;
}

ModulePipelineResult run_pipeline(const graph::Module& module, const Pipeline& pipeline,
                                  const PipelineOptions& options) {
  ModulePipelineResult result;
  for (const graph::Function* function : module.functions()) {
    PipelineResult done = run_pipeline(*function, pipeline, options);
    result.module.add_function(std::move(done.function), module.origin(function->symbol()));
    result.notes.insert(result.notes.end(), done.notes.begin(), done.notes.end());
  }
  return result;
}

Pipeline default_pipeline(std::function<bool(const std::string&)> keep_composite) {
  const PassFn verify_pass = [](const graph::Function& function, PassNotes&) {
    verify(function);
    return function;
  };
  return {
      {"verify", verify_pass},
      {"dce",
       [](const graph::Function& function, PassNotes& notes) {
         DeadCodeResult result = eliminate_dead_code(function);
         if (result.removed_nodes > 0)
           notes.push_back("removed " + std::to_string(result.removed_nodes) + " dead nodes");
         if (!result.removed_weights.empty()) {
           std::string names;
           for (const std::string& name : result.removed_weights) names += (names.empty() ? "" : ", ") + name;
           notes.push_back("dropped " + std::to_string(result.removed_weights.size()) +
                           " weights that nothing uses: " + names);
         }
         return std::move(result.function);
       }},
      {"constant_folding",
       [](const graph::Function& function, PassNotes& notes) {
         ConstantFoldingResult result = fold_constants(function);
         if (result.folded_nodes > 0) notes.push_back("folded " + std::to_string(result.folded_nodes) + " nodes");
         return std::move(result.function);
       }},
      {"lower_composites", [keep_composite](const graph::Function& function,
                                            PassNotes&) { return lower_composites(function, keep_composite); }},
      {"verify", verify_pass},
  };
}

}  // namespace websd::passes
