// `websd make-model`: writes a random-weight checkpoint of a preset architecture (sd15, sd21, tiny) in
// the diffusers folder layout, for tests and benchmarks on machines without real weights.
#include <iostream>
#include <memory>

#include "app/command_registry.h"
#include "models/model_presets.h"
#include "models/random_checkpoint.h"

namespace websd::app {
namespace {

void run_make_model(const RandomCheckpointOptions& options) {
  random_checkpoint_write(options, [](const std::string& line) { std::cerr << "make-model: " << line << std::endl; });
}

const bool registered = register_command(
    {"make-model", "Write a random-weight checkpoint of a model preset (diffusers layout, float16)",
     [](CLI::App& command) {
       auto options = std::make_shared<RandomCheckpointOptions>();
       std::string presets;
       for (const auto& name : model_preset_names()) presets += (presets.empty() ? "" : "|") + name;
       command.add_option("--preset", options->preset, "Architecture: " + presets)->required();
       command.add_option("--out", options->out_dir, "Folder to create")->required();
       command.add_option("--seed", options->seed, "Random seed; the same seed gives byte-identical files")
           ->default_val(0);
       command.add_option("--tokenizer", options->tokenizer_dir,
                          "Copy this Hugging Face tokenizer folder (default: a minimal byte-level vocabulary)");
       command.add_flag("--force", options->force, "Replace --out if it is a non-empty folder");
       command.callback([options] { run_make_model(*options); });
     }});

}  // namespace
}  // namespace websd::app
