// The `--model` option family that every command taking a checkpoint shares (generate, build, bench,
// tune, import, convert): the model path (a diffusers folder or a single-file .safetensors) and what a
// single file cannot tell by itself. Opening prints the importer's notes on stderr, so a user sees
// every assumption made about their file. Not thread-safe (CLI setup).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "import/diffusers_checkpoint.h"
#include "io/output_paths.h"

namespace websd::app {

struct ModelOptions {
  std::string model;  // empty: the built-in demo model, where a command allows it
  ImportOptions import;
};

// Adds --model, --tokenizer, --prediction-type, --config, --use-ema and (unless the command has its
// own) --scheduler-config. `model_help` describes --model for this command.
void add_model_options(CLI::App& command, ModelOptions& options, const std::string& model_help,
                       bool with_scheduler_config = true);

// The files and folders these options read, for check_outputs (io/output_paths.h).
std::vector<InputPath> model_inputs(const ModelOptions& options);

// Opens options.model, or the built-in demo model when it is empty (saying so on stderr, prefixed by
// `command`); prints the importer's notes. Throws websd::Error as DiffusersCheckpoint::open does.
std::shared_ptr<const DiffusersCheckpoint> open_model(const ModelOptions& options, const std::string& command);

}  // namespace websd::app
