// `websd import`: opens a checkpoint (a diffusers folder or a single-file .safetensors) and prints
// what it holds, per component:
// class, the config values that shape the network, tensor and parameter counts, dtypes, bytes on
// disk and shards, plus the time taken and the peak resident memory. Only headers are read, so a
// multi-gigabyte checkpoint opens in milliseconds without its weights becoming resident.
// --verify runs every check that `websd generate --model` runs when it loads the checkpoint, each
// failing with the error generate would give: the networks' configs (text_encoder, unet, vae: value
// types and ranges, and that they fit together), every tensor against the networks' parameter lists
// (missing, unexpected, misshapen: backends::CheckpointBackend binds them without loading weights), the
// scheduler (its config turned into a scheduler), the tokenizer (loaded) and the default image size
// (the UNet's sample_size times the VAE's scale, as generate checks it); then it reads every
// weight (streamed, bounded memory) and fails on non-finite values.

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "app/model_options.h"
#include "app/process_stats.h"
#include "backends/checkpoint_backend.h"
#include "core/error.h"
#include "import/checkpoint_tokenizer.h"
#include "import/checkpoint_verify.h"
#include "import/diffusers_checkpoint.h"
#include "io/json_file.h"
#include "models/clip_config.h"
#include "models/unet_config.h"
#include "models/vae_config.h"
#include "pipeline/generation_params.h"
#include "pipeline/schedulers/scheduler_factory.h"

namespace websd::app {
namespace {

struct ImportCommandOptions {
  ModelOptions model;
  bool json = false;
  bool verify = false;
};

// Config values that decide a network's shape, when the component's config has them.
constexpr const char* kNotableConfigKeys[] = {"in_channels",
                                              "out_channels",
                                              "latent_channels",
                                              "sample_size",
                                              "block_out_channels",
                                              "layers_per_block",
                                              "attention_head_dim",
                                              "num_attention_heads",
                                              "cross_attention_dim",
                                              "use_linear_projection",
                                              "upcast_attention",
                                              "prediction_type",
                                              "scaling_factor",
                                              "hidden_size",
                                              "intermediate_size",
                                              "num_hidden_layers",
                                              "hidden_act",
                                              "vocab_size",
                                              "max_position_embeddings",
                                              "projection_dim"};

const char* kind_name(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::kModel:
      return "model";
    case ComponentKind::kTokenizer:
      return "tokenizer";
    case ComponentKind::kScheduler:
      return "scheduler";
    case ComponentKind::kProcessor:
      return "processor";
  }
  return "model";
}

std::string mebibytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

nlohmann::ordered_json notable_config(const nlohmann::json& config) {
  nlohmann::ordered_json notable = nlohmann::ordered_json::object();
  for (const char* key : kNotableConfigKeys) {
    if (const auto it = config.find(key); it != config.end()) notable[key] = *it;
  }
  return notable;
}

std::string naming_note(const nlohmann::ordered_json& component) {
  if (component["naming"] != "text_model_prefix") return "as stored";
  return component["names_normalised"].get<bool>()
             ? "canonical 'text_model.' prefix (added: the file stores names without it)"
             : "canonical 'text_model.' prefix (as stored)";
}

nlohmann::ordered_json describe(const CheckpointComponent& component, const ComponentVerifyReport* verified) {
  nlohmann::ordered_json out;
  out["name"] = component.name();
  out["library"] = component.library();
  out["class"] = component.class_name();
  out["kind"] = kind_name(component.kind());
  out["dir"] = component.dir();
  if (!component.has_weights()) return out;
  const ComponentStats stats = component.stats();
  out["config"] = notable_config(component.config());
  out["config_origin"] = component.config_origin();
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& file : component.weight_files()) files.push_back(file->path());
  out["weights"] = {{"files", files},
                    {"index", component.index_path()},
                    {"variant", component.variant()},
                    {"shards", component.weight_files().size()},
                    {"bytes_on_disk", stats.bytes_on_disk}};
  out["tensors"] = stats.tensors;
  out["buffers"] = stats.buffers;
  out["parameters"] = stats.parameters;
  out["dtypes"] = stats.dtypes;
  out["naming"] = component.naming() == TensorNaming::kClipTextPrefix ? "text_model_prefix" : "as_stored";
  out["names_normalised"] = component.names_were_normalised();
  if (verified != nullptr) {
    nlohmann::ordered_json bad = nlohmann::ordered_json::array();
    for (const auto& tensor : verified->non_finite) {
      bad.push_back(
          {{"name", tensor.name}, {"file", tensor.file}, {"count", tensor.count}, {"first_index", tensor.first_index}});
    }
    out["verify"] = {
        {"tensors_read", verified->tensors_read}, {"values_read", verified->values_read}, {"non_finite", bad}};
  }
  return out;
}

void print_text(const nlohmann::ordered_json& summary) {
  std::cout << "checkpoint " << summary["dir"].get<std::string>();
  if (summary["format"] == "single_file") {
    std::cout << " (single file, " << summary["family"].get<std::string>() << "; configs from "
              << summary["config_source"].get<std::string>() << ")";
  } else if (!summary["pipeline_class"].get<std::string>().empty()) {
    std::cout << " (" << summary["pipeline_class"].get<std::string>() << ")";
  }
  std::cout << "\n";
  if (summary["format"] == "single_file") {
    std::cout << "tokenizer: " << summary["tokenizer"].get<std::string>()
              << "\nscheduler: " << summary["scheduler"].get<std::string>() << "\n";
  }
  for (const auto& component : summary["components"]) {
    std::cout << component["name"].get<std::string>() << ": " << component["library"].get<std::string>() << " "
              << component["class"].get<std::string>() << "\n";
    if (!component.contains("weights")) {
      std::cout << "  " << component["kind"].get<std::string>() << " folder " << component["dir"].get<std::string>()
                << "\n";
      continue;
    }
    std::cout << "  config:";
    for (const auto& [key, value] : component["config"].items()) std::cout << " " << key << "=" << json_preview(value);
    const auto& weights = component["weights"];
    std::cout << "\n  weights: " << weights["shards"].get<std::size_t>() << " file(s), "
              << mebibytes(weights["bytes_on_disk"].get<std::uint64_t>()) << " on disk";
    if (!weights["index"].get<std::string>().empty()) std::cout << ", index " << weights["index"].get<std::string>();
    if (!weights["variant"].get<std::string>().empty()) {
      std::cout << ", variant " << weights["variant"].get<std::string>();
    }
    std::cout << "\n  tensors: " << component["tensors"].get<std::size_t>() << " ("
              << component["buffers"].get<std::size_t>()
              << " buffers), parameters: " << component["parameters"].get<std::uint64_t>() << ", dtypes:";
    for (const auto& [dtype, count] : component["dtypes"].items()) std::cout << " " << dtype << " x" << count.dump();
    std::cout << "\n  names: " << naming_note(component) << "\n";
    if (component.contains("verify")) {
      const auto& verify = component["verify"];
      std::cout << "  verify: " << verify["values_read"].get<std::uint64_t>() << " values in "
                << verify["tensors_read"].get<std::size_t>() << " tensors, " << verify["non_finite"].size()
                << " tensor(s) with non-finite values\n";
    }
  }
  if (summary.contains("checks")) {
    std::string checks;
    for (const auto& check : summary["checks"]) checks += (checks.empty() ? "" : ", ") + check.get<std::string>();
    std::cout << "verify: " << checks << " (every check 'websd generate --model' runs at load, and every value read): "
              << (summary["verified"].get<bool>() ? "passed" : "FAILED (non-finite values)") << "\n";
  }
  char timing[64];
  std::snprintf(timing, sizeof(timing), "opened in %.1f ms", summary["open_seconds"].get<double>() * 1000.0);
  std::cout << timing;
  if (summary.contains("verify_seconds")) {
    std::snprintf(timing, sizeof(timing), ", verified in %.1f ms", summary["verify_seconds"].get<double>() * 1000.0);
    std::cout << timing;
  }
  std::cout << "; peak resident memory " << mebibytes(summary["peak_rss_bytes"].get<std::uint64_t>()) << std::endl;
}

// Refuses a UNet sample_size whose default image (sample_size x the VAE's scale) generate would
// refuse, naming the key, its value and generate's reason.
void check_default_size(const ModelInfo& info, const CheckpointComponent& unet) {
  const std::int64_t width = info.sample_width * info.vae_scale_factor;
  const std::int64_t height = info.sample_height * info.vae_scale_factor;
  try {
    check_image_size("import", width, height, info);
  } catch (const Error& error) {
    const auto key = unet.config().find("sample_size");
    const std::string value = key == unet.config().end() ? "(absent)" : json_preview(*key);
    const std::string reason = error.message();
    throw Error("import", unet.config_origin() + ": sample_size " + value + " makes generate's default image " +
                              std::to_string(width) + "x" + std::to_string(height) + ", which it refuses: " + reason +
                              " (set sample_size so that it fits, or pass --width and --height to generate)");
  }
}

// The checks `websd generate --model` runs when it loads `checkpoint`, in its order, each throwing
// the websd::Error generate would throw. Returns their names, for the summary.
std::vector<std::string> run_load_checks(const std::shared_ptr<const DiffusersCheckpoint>& checkpoint) {
  // The network configs: value types and ranges (CheckpointBackend parses the same three again).
  const CheckpointComponent& text_encoder = checkpoint->component("text_encoder");
  const CheckpointComponent& unet = checkpoint->component("unet");
  const CheckpointComponent& vae = checkpoint->component("vae");
  clip_config_from_json(text_encoder.config(), text_encoder.config_origin());
  unet_config_from_json(unet.config(), unet.config_origin());
  vae_config_from_json(vae.config(), vae.config_origin());
  // That the configs fit together, and every tensor against the networks' parameter lists (headers
  // only: no weight is loaded until a network runs); then the image size generate makes when none
  // is given, checked as generate checks it.
  {
    const backends::CheckpointBackend backend(checkpoint);
    check_default_size(backend.info(), unet);
  }
  // The scheduler generate makes when no --scheduler or --scheduler-config is given.
  if (checkpoint->scheduler_config().is_null()) {
    const std::string origin = checkpoint->scheduler_config_origin().empty()
                                   ? checkpoint->dir() + "/scheduler/scheduler_config.json"
                                   : checkpoint->scheduler_config_origin();
    throw Error("import", origin + " does not exist (generate needs --scheduler NAME or --scheduler-config FILE)");
  }
  schedulers::create_scheduler(checkpoint->scheduler_config(), "", checkpoint->scheduler_config_origin());
  checkpoint_tokenizer(*checkpoint);
  return {"configs", "tensors", "scheduler", "tokenizer"};
}

void run_import(const ImportCommandOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto opened =
      std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(options.model.model, options.model.import));
  const DiffusersCheckpoint& checkpoint = *opened;
  for (const std::string& note : checkpoint.notes()) std::cerr << "websd: note: " << note << "\n";
  const double open_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<ComponentVerifyReport> reports;
  std::vector<std::string> checks;
  double verify_seconds = 0;
  if (options.verify) {
    const auto verify_start = Clock::now();
    checks = run_load_checks(opened);
    for (const auto& component : checkpoint.components()) {
      if (component.has_weights()) reports.push_back(verify_component(component));
    }
    checks.push_back("values");
    verify_seconds = std::chrono::duration<double>(Clock::now() - verify_start).count();
  }

  std::size_t bad_tensors = 0;
  const NonFiniteTensor* first_bad = nullptr;
  for (const auto& report : reports) {
    bad_tensors += report.non_finite.size();
    if (first_bad == nullptr && !report.ok()) first_bad = &report.non_finite.front();
  }
  nlohmann::ordered_json summary;
  summary["dir"] = checkpoint.dir();
  summary["pipeline_class"] = checkpoint.pipeline_class();
  summary["format"] = checkpoint.is_single_file() ? "single_file" : "diffusers";
  if (checkpoint.is_single_file()) {
    summary["family"] = checkpoint.family();
    summary["config_source"] = checkpoint.config_source();
  }
  summary["tokenizer"] = checkpoint.tokenizer().origin;
  summary["scheduler"] = checkpoint.scheduler_config_origin();
  summary["notes"] = checkpoint.notes();
  summary["components"] = nlohmann::ordered_json::array();
  for (const auto& component : checkpoint.components()) {
    const ComponentVerifyReport* verified = nullptr;
    for (const auto& report : reports) {
      if (report.component == component.name()) verified = &report;
    }
    summary["components"].push_back(describe(component, verified));
  }
  summary["open_seconds"] = open_seconds;
  if (options.verify) {
    summary["checks"] = checks;
    summary["verified"] = first_bad == nullptr;
    summary["verify_seconds"] = verify_seconds;
  }
  summary["peak_rss_bytes"] = peak_rss_bytes();
  if (options.json) {
    // Paths need not be UTF-8: replace what JSON cannot carry instead of failing.
    std::cout << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    print_text(summary);
  }

  if (first_bad != nullptr) {
    throw Error("import", first_bad->file + ": tensor " + safetensors_quote_name(first_bad->name) + " holds " +
                              std::to_string(first_bad->count) + " non-finite values (first at flat index " +
                              std::to_string(first_bad->first_index) + "); " + std::to_string(bad_tensors) +
                              " tensor(s) in all (a corrupt file, or weights cast to float16 with overflow)");
  }
}

const bool registered = register_command(
    {"import", "Open a checkpoint (diffusers folder or single .safetensors) and summarise its components",
     [](CLI::App& command) {
       auto options = std::make_shared<ImportCommandOptions>();
       add_model_options(command, options->model,
                         "Diffusers model folder (holding model_index.json) or single-file .safetensors checkpoint");
       command.get_option("--model")->required();
       command.add_option("--variant", options->model.import.variant,
                          "Weight variant to read, e.g. fp16 (default: the plain files, or the only variant)");
       command.add_flag("--json", options->json, "Print the summary as JSON");
       command.add_flag("--verify", options->verify,
                        "Run every check that 'websd generate --model' runs when it loads the checkpoint (network "
                        "configs, every tensor's name and shape, scheduler config, tokenizer), then read every "
                        "weight (streamed, bounded memory) and fail on NaN or infinite values");
       command.callback([options] { run_import(*options); });
     }});

}  // namespace
}  // namespace websd::app
