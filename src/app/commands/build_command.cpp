// `websd build --model DIR --target NAME --out ART [--dtype f32|f16|bf16] [--size WxH ... | --width W --height H]
// [--tuning-db FILE] [--encrypt-key-file K] [--sign-key K] [--dump-ir DIR]`: compiles a checkpoint into a
// deployable artifact for a target of the registry (src/compiler/build_artifact.h,
// src/compiler/target_registry.h, src/artifact/FORMAT.md) and prints what
// it holds: functions with their launches and memory plans, weights, kernels, tuning coverage.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "app/cpu_compute_options.h"
#include "app/model_options.h"
#include "app/number_ranges.h"
#include "artifact/image_sizes.h"
#include "artifact/weight_index.h"
#include "compiler/build_artifact.h"
#include "compiler/target_registry.h"
#include "core/error.h"
#include "targets/cpu/runtime/cpu_arch.h"
#include "tuning/tuning_db.h"

namespace websd::app {
namespace {

struct BuildCommandOptions {
  ModelOptions model;
  std::string target;
  std::string out;
  std::string dtype = "f32";
  std::vector<std::string> sizes;
  std::vector<std::string> tiers;
  std::string cpu_arch;  // --cpu-arch
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::string tuning_db;
  std::string key_file;
  std::string sign_key_file;
  std::string dump_ir;
  bool force = false;
};

DType storage_dtype(const std::string& name) {
  const std::optional<DType> dtype = artifact::weight_dtype_from_name(name);
  if (!dtype) throw Error("build", "--dtype " + name + ": unknown weight storage type (use f32, f16 or bf16)");
  return *dtype;
}

std::string target_help() {
  std::string names;
  for (const compiler::Target* target : compiler::registered_targets()) {
    names += (names.empty() ? "" : ", ") + target->name();
  }
  return "target to build for: " + names;
}

// --size WxH (repeated), or the one size --width/--height give (0: the model's), or none.
std::vector<artifact::ImageSize> image_sizes(const BuildCommandOptions& options) {
  if (!options.sizes.empty() && (options.width != 0 || options.height != 0)) {
    throw Error("build", "give the image sizes either as --size WxH (repeatable) or as one --width/--height, not both");
  }
  std::vector<artifact::ImageSize> sizes;
  for (const std::string& text : options.sizes) {
    const std::optional<artifact::ImageSize> size = artifact::parse_image_size(text);
    if (!size) throw Error("build", "--size " + text + ": expected WIDTHxHEIGHT in pixels, such as 512x768");
    sizes.push_back(*size);
  }
  if (options.width != 0 || options.height != 0) sizes.push_back({options.width, options.height});
  return sizes;
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

void run_build(const BuildCommandOptions& options) {
  const compiler::Target& target = compiler::find_target(options.target);
  compiler::BuildOptions build;
  build.storage = storage_dtype(options.dtype);
  build.out = options.out;
  build.sizes = image_sizes(options);
  build.tiers = options.tiers;
  if (!options.cpu_arch.empty()) {
    if (target.name() != "cpu") throw Error("build", "--cpu-arch is for --target cpu, not " + target.name());
    if (!cpu::is_cpu_arch(options.cpu_arch)) {
      throw Error("build", "--cpu-arch " + options.cpu_arch + ": not an instruction set websd builds for (use " +
                               cpu::cpu_arch_list() + ")");
    }
  }
  build.cpu_arch = options.cpu_arch;
  build.dump_ir_dir = options.dump_ir;
  if (!options.key_file.empty()) build.key_file = options.key_file;
  if (!options.sign_key_file.empty()) build.sign_key_file = options.sign_key_file;
  std::optional<tuning::TuningDb> db;
  if (!options.tuning_db.empty()) db = tuning::TuningDb::read_file(options.tuning_db);
  build.tuning_db = db ? &*db : nullptr;
  std::vector<InputPath> inputs = model_inputs(options.model);
  inputs.insert(inputs.end(), {{"--tuning-db", options.tuning_db},
                               {"--encrypt-key-file", options.key_file},
                               {"--sign-key", options.sign_key_file}});
  std::vector<OutputPath> outputs = {{"--out", options.out, true, options.force}};
  if (!options.dump_ir.empty()) outputs.push_back({"--dump-ir", options.dump_ir, true, options.force});
  check_outputs("build", outputs, inputs);
  // On the cpu target bf16 storage also means bf16 convolutions, linear layers and attention, where this CPU has them;
  // f16 storage means their weights held in f16 (used in place from the shards), widened for each call.
  if (target.name() == "cpu" && build.storage == DType::kBF16) build.compute = cpu_compute_dtype("bf16", "build");
  if (target.name() == "cpu" && build.storage == DType::kF16) build.compute = cpu_compute_dtype("f16", "build");
  if (options.model.model.empty()) {
    std::cerr << "websd build: no --model given: building the built-in DEMO model (tiny, random weights)\n";
  }
  build.checkpoint = open_model(options.model, "build");
  build.progress = [](const std::string& line) { std::cerr << "websd build: " << line << std::endl; };

  const auto start = std::chrono::steady_clock::now();
  const compiler::BuildReport report = compiler::build_artifact(build, target);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (const auto& note : report.notes) std::cerr << "websd build: note: " << note << "\n";
  std::printf("%-24s %9s %10s %14s %14s %14s\n", "function", "launches", "generated", "unplanned MiB", "arena MiB",
              "peak MiB");
  for (const auto& function : report.functions) {
    std::printf("%-24s %9zu %10zu %14.1f %14.1f %14.1f\n", function.symbol.c_str(), function.launches,
                function.generated_kernels, mib(static_cast<double>(function.unplanned_bytes)),
                mib(static_cast<double>(function.arena_bytes)), mib(static_cast<double>(function.peak_bytes)));
  }
  std::printf("weights: %zu tensors, %.1f MiB stored as %s\n", report.weight_count,
              mib(static_cast<double>(report.weight_bytes)), options.dtype.c_str());
  std::printf("tuning: %zu of %zu tunable kernels have records%s\n", report.tuned, report.tunable,
              build.tuning_db ? "" : " (no --tuning-db: defaults)");
  std::printf("generated kernels compiled in %.1f s; build took %.1f s\n", report.kernel_compile_seconds, seconds);
  std::printf("wrote %s\n", options.out.c_str());
}

const bool registered = register_command(
    {"build", "Compile a checkpoint into a deployable artifact for a target", [](CLI::App& command) {
       auto options = std::make_shared<BuildCommandOptions>();
       add_model_options(command, options->model,
                         "diffusers model folder or single-file .safetensors (default: the built-in demo model)");
       command.add_option("--target", options->target, target_help())->required();
       command.add_option("--out", options->out, "artifact directory to write")->required();
       command
           .add_option("--dtype", options->dtype,
                       "weight storage: f32, f16 or bf16 (on the cpu target bf16 also makes convolutions and linear "
                       "layers compute in "
                       "bf16 where the CPU has it)")
           ->capture_default_str();
       command.add_option("--size", options->sizes,
                          "image size WxH the artifact runs, repeatable: one artifact holds every size given, "
                          "sharing one copy of the weights; the first is its default (default: the model's size)");
       command
           .add_option(
               "--tiers", options->tiers,
               "kernel tiers to write, comma-separated (webgpu: f32, f16, subgroup-matrix); the base tier (f32) is "
               "always written; the runtime picks the best one the device offers (default: all)")
           ->delimiter(',');
       command
           .add_option("--cpu-arch", options->cpu_arch,
                       "cpu target: the instruction set the kernel library is built for, x86-64 (default: every 64-bit "
                       "x86), x86-64-v2, x86-64-v3 (AVX2), x86-64-v4 (AVX-512) or aarch64 (with Debian's "
                       "g++-aarch64-linux-gnu); a machine without it refuses the artifact")
           ->option_text("ARCH");
       command.add_option("--width", options->width, "image width the artifact runs (default: the model's)")
           ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
       command.add_option("--height", options->height, "image height the artifact runs (default: the model's)")
           ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
       command.add_option("--tuning-db", options->tuning_db, "tuning database whose records to apply");
       command.add_option("--encrypt-key-file", options->key_file,
                          "AES-256 key file: encrypt the weights and authenticate the manifest");
       command.add_option("--sign-key", options->sign_key_file,
                          "Ed25519 private key (PEM, 'openssl genpkey -algorithm ed25519'): sign the artifact, so "
                          "that 'generate/inspect --trust-key' can check who built it");
       command.add_option("--dump-ir", options->dump_ir, "write the IR after every pass into this folder");
       command.add_flag("--force", options->force,
                        "replace a previous artifact at --out, and write into a --dump-ir folder that is not empty");
       command.callback([options] { run_build(*options); });
     }});

}  // namespace
}  // namespace websd::app
