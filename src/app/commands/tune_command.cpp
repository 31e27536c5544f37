// `websd tune`: searches the tunable kernels' parameters on this machine and appends the best per
// workload to a tuning database (src/tuning/FORMAT.md), which `websd generate --tuning-db` and
// `websd bench --tuning-db` apply. The workloads are those of the networks as `generate` runs them
// at the given size: text encoder and UNet at batch 2 (classifier-free guidance), VAE decoder at
// batch 1, each compiled for the CPU as the executor compiles it. Without --model the built-in demo
// model is tuned.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "app/model_options.h"
#include "app/number_ranges.h"
#include "app/version.h"
#include "core/error.h"
#include "import/diffusers_checkpoint.h"
#include "models/graphs/sd_graphs.h"
#include "passes/pass_pipeline.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/generation_params.h"
#include "pipeline/progress.h"
#include "targets/cpu/codegen/cpu_target.h"
#include "targets/cpu/tuning/cpu_attention_tuner.h"
#include "tuning/cpu_device.h"

namespace websd::app {
namespace {

struct TuneOptions {
  ModelOptions model;
  std::string target;
  std::string db = "tuning.jsonl";
  std::int64_t width = 0;
  std::int64_t height = 0;
  int runs = 5;
};

// The networks as the cpu target compiles them (for artifacts and for --model alike) for a width x
// height txt2img with guidance.
std::vector<graph::Function> compiled_networks(const DiffusersCheckpoint& checkpoint, std::int64_t width,
                                               std::int64_t height) {
  const CheckpointComponent& text = checkpoint.component("text_encoder");
  const CheckpointComponent& unet_component = checkpoint.component("unet");
  const CheckpointComponent& vae_component = checkpoint.component("vae");
  const ClipTextConfig clip = clip_config_from_json(text.config(), text.config_origin());
  const UNetConfig unet = unet_config_from_json(unet_component.config(), unet_component.config_origin());
  const VaeConfig vae = vae_config_from_json(vae_component.config(), vae_component.config_origin());

  const std::int64_t scale = std::int64_t{1} << (vae.block_count() - 1);
  const auto [sample_height, sample_width] =
      unet.sample_size.value_or(std::pair{ModelInfo{}.sample_height, ModelInfo{}.sample_width});
  const std::int64_t w = width ? width : sample_width * scale, h = height ? height : sample_height * scale;
  ModelInfo info;
  info.vae_scale_factor = scale;
  info.latent_size_multiple = std::int64_t{1} << (unet.block_count() - 1);
  check_image_size("tune", w, h, info);
  std::cerr << "websd tune: " << checkpoint.dir() << " at " << w << "x" << h << "\n";
  const std::int64_t tokens = clip.max_position_embeddings;
  std::vector<graph::Function> networks;
  for (const graph::Function& function :
       {clip_text_graph(clip, 2, tokens), unet_graph(unet, 2, h / scale, w / scale, tokens),
        vae_decode_graph(vae, 1, h / scale, w / scale)}) {
    networks.push_back(passes::run_pipeline(function, compiler::cpu_target().pass_list({})).function);
  }
  return networks;
}

void print_table(const std::vector<tuning::AttentionTuneResult>& results) {
  std::size_t width = std::string("workload").size();
  for (const auto& result : results) width = std::max(width, result.workload.key().size());
  const int column = static_cast<int>(width);
  std::printf("%-*s %10s %11s %11s %8s\n", column, "workload", "block_rows", "default ms", "best ms", "speedup");
  for (const auto& result : results) {
    std::printf("%-*s %10lld %11.3f %11.3f %7.2fx\n", column, result.workload.key().c_str(),
                static_cast<long long>(result.best.params.at(tuning::kBlockRowsParam)), result.default_ms,
                result.best.median_ms, result.default_ms / std::max(result.best.median_ms, 1e-9));
  }
}

void run_tune(const TuneOptions& options) {
  if (options.target != "cpu") {
    throw Error("tune", "--target " + options.target + ": this build can tune only the 'cpu' target");
  }
  // Fail before the timing, not after it: records go to an existing folder and a well-formed file.
  // The database is only appended to, so an existing one needs no --force.
  check_outputs("tune", {{"--db", options.db, false, true}}, model_inputs(options.model));
  if (std::filesystem::exists(options.db)) tuning::TuningDb::read_file(options.db);
  if (options.model.model.empty()) {
    std::cerr << "websd tune: no --model given: using the built-in DEMO model (tiny, random weights)\n";
  }
  const std::vector<graph::Function> networks =
      compiled_networks(*open_model(options.model, "tune"), options.width, options.height);
  std::vector<const graph::Function*> functions;
  for (const auto& network : networks) functions.push_back(&network);
  const auto workloads = tuning::distinct_attention_workloads(functions);
  const std::string device = tuning::cpu_device_name();
  std::cerr << "websd tune: " << workloads.size() << " attention workloads on \"" << device << "\", " << options.runs
            << " timed runs per candidate; appending to " << options.db << "\n";

  tuning::AttentionTuneOptions tune_options;
  tune_options.runs = options.runs;
  std::vector<tuning::AttentionTuneResult> results;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    std::cerr << "[" << i + 1 << "/" << workloads.size() << "] " << workloads[i].key() << std::flush;
    progress_line_open(std::cerr);  // an error while tuning starts on its own line
    results.push_back(tuning::tune_cpu_attention(workloads[i], tune_options));
    tuning::tuning_db_append(options.db,
                             tuning::attention_tuning_record(results.back(), device, std::string(kVersion)));
    std::cerr << ": block_rows " << results.back().best.params.at(tuning::kBlockRowsParam) << "\n";
    progress_line_closed(std::cerr);
  }
  print_table(results);
  std::cout << "appended " << results.size() << " records to " << options.db << std::endl;
}

const bool registered = register_command(
    {"tune", "Time the tunable kernels' parameters on this machine and append the best to a tuning database",
     [](CLI::App& command) {
       auto options = std::make_shared<TuneOptions>();
       add_model_options(command, options->model,
                         "diffusers model folder or single-file .safetensors (default: the built-in demo model)");
       command.add_option("--target", options->target, "target to tune (cpu)")->required();
       command.add_option("--db", options->db, "tuning database to append to (JSON lines)")->capture_default_str();
       command.add_option("--width", options->width, "image width in pixels (default: the model's)")
           ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
       command.add_option("--height", options->height, "image height in pixels (default: the model's)")
           ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
       command.add_option("--runs", options->runs, "timed runs per candidate; the median counts")
           ->capture_default_str()
           ->check(integer_range(1, std::numeric_limits<int>::max()));
       command.callback([options] { run_tune(*options); });
     }});

}  // namespace
}  // namespace websd::app
