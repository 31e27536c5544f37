// `websd convert --model PATH --out PATH [--to diffusers|single-file]`: a single-file checkpoint
// (LDM layout, as the A1111 webui, ComfyUI and stable-diffusion.cpp use) into a diffusers folder, or
// a diffusers folder into a single file, for interchange. The default direction is the other form
// of what --model is. Tensors are copied byte for byte (dtypes kept), one at a time; the output
// appears only when complete.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "app/command_registry.h"
#include "app/model_options.h"
#include "core/error.h"
#include "import/diffusers_folder_writer.h"
#include "import/single_file_writer.h"

namespace websd::app {
namespace {

struct ConvertOptions {
  ModelOptions model;
  std::string out;
  std::string to;
  bool no_metadata = false;
  bool force = false;
};

void run_convert(const ConvertOptions& options) {
  if (options.model.model.empty()) throw Error("convert", "--model is required (a folder or a .safetensors file)");
  std::error_code error;
  const std::string to = !options.to.empty()                                         ? options.to
                         : std::filesystem::is_directory(options.model.model, error) ? "single-file"
                                                                                     : "diffusers";
  check_outputs("convert", {{"--out", options.out, to == "diffusers", options.force}}, model_inputs(options.model));
  const auto start = std::chrono::steady_clock::now();
  const std::shared_ptr<const DiffusersCheckpoint> checkpoint = open_model(options.model, "convert");
  if (to == "single-file") {
    const SingleFileWriteReport report = single_file_write(*checkpoint, options.out, {!options.no_metadata});
    std::printf("wrote %s: single file, %s layout, %zu tensors, %.1f MiB%s\n", options.out.c_str(),
                report.layout.c_str(), report.tensors, static_cast<double>(report.bytes) / (1024.0 * 1024.0),
                options.no_metadata ? "" : ", websd configs and tokenizer in its metadata");
  } else {
    if (options.no_metadata) throw Error("convert", "--no-metadata applies to --to single-file");
    const DiffusersFolderWriteReport report = diffusers_folder_write(*checkpoint, options.out, options.force);
    std::printf("wrote %s: diffusers folder, %zu tensors, %.1f MiB of weights\n", options.out.c_str(), report.tensors,
                static_cast<double>(report.bytes) / (1024.0 * 1024.0));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("took %.1f s\n", seconds);
}

const bool registered = register_command(
    {"convert", "Convert a single-file .safetensors checkpoint to a diffusers folder, or back", [](CLI::App& command) {
       auto options = std::make_shared<ConvertOptions>();
       add_model_options(command, options->model, "Single-file .safetensors checkpoint or diffusers folder to read");
       command.get_option("--model")->required();
       command.add_option("--out", options->out, "File (single-file) or folder (diffusers) to write")->required();
       command.add_option("--to", options->to, "diffusers or single-file (default: the other form of what --model is)")
           ->check(CLI::IsMember({"diffusers", "single-file"}));
       command.add_flag("--no-metadata", options->no_metadata,
                        "single-file: leave websd's configs and tokenizer out of the metadata");
       command.add_flag("--force", options->force,
                        "Replace --out if it exists (a file, or a folder that is not empty)");
       command.callback([options] { run_convert(*options); });
     }});

}  // namespace
}  // namespace websd::app
