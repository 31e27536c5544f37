// `websd make-model`: writes a random-weight checkpoint of a preset architecture (sd15, sd21, tiny) in
// the diffusers folder layout, or (--format single-file) as one LDM-layout .safetensors, for tests and
// benchmarks on machines without real weights.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "app/command_registry.h"
#include "core/error.h"
#include "import/diffusers_checkpoint.h"
#include "import/single_file_writer.h"
#include "io/output_paths.h"
#include "models/model_presets.h"
#include "models/random_checkpoint.h"
#include "pipeline/random/seed.h"

namespace websd::app {
namespace {

struct MakeModelOptions {
  RandomCheckpointOptions checkpoint;
  std::string seed = "0";
  std::string format = "diffusers";
  bool no_metadata = false;
};

void run_make_model(MakeModelOptions options) {
  const auto progress = [](const std::string& line) { std::cerr << "make-model: " << line << std::endl; };
  const std::optional<std::uint64_t> seed = parse_seed(options.seed, "--seed", "make-model");
  options.checkpoint.seed = seed ? *seed : random_seed();
  if (!seed) progress("random seed " + std::to_string(options.checkpoint.seed));
  check_outputs("make-model",
                {{"--out", options.checkpoint.out_dir, options.format == "diffusers", options.checkpoint.force}},
                {{"--tokenizer", options.checkpoint.tokenizer_dir}});
  if (options.format == "diffusers") {
    if (options.no_metadata) throw Error("make-model", "--no-metadata applies to --format single-file");
    random_checkpoint_write(options.checkpoint, progress);
    return;
  }
  // The folder is written beside --out, converted, and removed: one code path makes the weights.
  namespace fs = std::filesystem;
  const std::string out = options.checkpoint.out_dir;
  RandomCheckpointOptions folder = options.checkpoint;
  folder.out_dir = out + ".folder-" + std::to_string(::getpid());
  folder.force = true;
  struct RemoveFolder {
    std::string path;
    ~RemoveFolder() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{folder.out_dir};
  random_checkpoint_write(folder, progress);
  const SingleFileWriteReport report =
      single_file_write(DiffusersCheckpoint::open(folder.out_dir), out, {!options.no_metadata});
  progress("wrote " + out + ": single file, " + report.layout + " layout, " + std::to_string(report.tensors) +
           " tensors");
}

const bool registered = register_command(
    {"make-model", "Write a random-weight checkpoint of a model preset (diffusers layout, float16)",
     [](CLI::App& command) {
       auto options = std::make_shared<MakeModelOptions>();
       RandomCheckpointOptions& checkpoint = options->checkpoint;
       std::string presets;
       for (const auto& name : model_preset_names()) presets += (presets.empty() ? "" : "|") + name;
       command.add_option("--preset", checkpoint.preset, "Architecture: " + presets)->required();
       command.add_option("--out", checkpoint.out_dir, "Folder to create (single-file: the .safetensors file)")
           ->required();
       command
           .add_option("--seed", options->seed,
                       "Seed from 0 to 2^64-1 (-1: a random one, printed); the same seed gives byte-identical files")
           ->capture_default_str();
       command.add_option("--tokenizer", checkpoint.tokenizer_dir,
                          "Copy this Hugging Face tokenizer folder (default: a minimal byte-level vocabulary)");
       command
           .add_option("--format", options->format,
                       "diffusers (a folder) or single-file (one LDM-layout .safetensors, as A1111/ComfyUI use)")
           ->check(CLI::IsMember({"diffusers", "single-file"}))
           ->capture_default_str();
       command.add_flag("--no-metadata", options->no_metadata,
                        "single-file: leave websd's configs and tokenizer out of the metadata");
       command.add_flag("--force", checkpoint.force, "Replace --out if it is a non-empty folder (or an existing file)");
       command.callback([options] { run_make_model(*options); });
     }});

}  // namespace
}  // namespace websd::app
