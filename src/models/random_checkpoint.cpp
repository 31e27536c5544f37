#include "models/random_checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/safetensors_writer.h"
#include "models/model_params.h"
#include "models/model_presets.h"
#include "models/param_init.h"
#include "models/tokenizer_folder.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

struct Component {
  std::string name;         // folder, e.g. "unet"
  std::string config_text;  // config.json content
  std::string weights_file;
  std::vector<ModelParam> params;
};

void create_folder(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw Error("make-model", dir.string() + ": cannot create folder: " + error.message());
}

// Pretty-prints a preset's JSON text with its key order kept.
void write_json_text(const fs::path& path, const std::string& text) {
  const auto value = nlohmann::ordered_json::parse(text);
  atomic_write_file(path.string(), [&](std::ostream& out) { out << value.dump(2) << "\n"; });
}

std::vector<Component> preset_components(const ModelPreset& preset) {
  const std::string origin = "preset " + preset.name + ": ";
  return {
      {"text_encoder", preset.text_encoder, "model.safetensors",
       clip_text_params(clip_config_from_json(json_parse(preset.text_encoder, origin + "text_encoder"),
                                              origin + "text_encoder/config.json"))},
      {"unet", preset.unet, "diffusion_pytorch_model.safetensors",
       unet_params(unet_config_from_json(json_parse(preset.unet, origin + "unet"), origin + "unet/config.json"))},
      {"vae", preset.vae, "diffusion_pytorch_model.safetensors",
       vae_params(vae_config_from_json(json_parse(preset.vae, origin + "vae"), origin + "vae/config.json"))},
  };
}

void write_component(const fs::path& root, const Component& component, std::uint64_t seed,
                     const CheckpointProgress& progress) {
  const fs::path dir = root / component.name;
  create_folder(dir);
  write_json_text(dir / "config.json", component.config_text);
  const std::int64_t count = param_count(component.params);
  progress(component.name + ": " + std::to_string(component.params.size()) + " tensors, " + std::to_string(count) +
           " parameters -> " + component.name + "/" + component.weights_file + " (" +
           std::to_string((2 * count) >> 20) + " MiB)");
  std::vector<SafetensorsTensorSpec> specs;
  for (const auto& param : component.params) specs.push_back({param.spec.name, DType::kF16, param.spec.shape});
  safetensors_write_streamed((dir / component.weights_file).string(), specs,
                             [&](std::size_t index, std::span<std::byte> bytes) {
                               param_init_f16(component.params[index], seed, component.name, bytes);
                             },
                             {{"format", "pt"}});
}

// Refuses a destination that is a file, or a non-empty folder unless `force`.
void check_destination(const fs::path& out, bool force) {
  std::error_code error;
  const auto status = fs::status(out, error);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status)) throw Error("make-model", out.string() + ": exists and is not a folder");
  if (!fs::is_empty(out, error) && !force) {
    throw Error("make-model", out.string() + ": folder is not empty (pass --force to replace it)");
  }
}

// Moves the finished folder into place; an existing destination is set aside first and removed last.
void commit_folder(const fs::path& staging, const fs::path& out) {
  std::error_code error;
  const fs::path previous = out.string() + ".old-" + std::to_string(::getpid());
  const bool replace = fs::exists(out, error);
  if (replace) {
    fs::rename(out, previous, error);
    if (error) throw Error("make-model", out.string() + ": cannot move the old folder aside: " + error.message());
  }
  fs::rename(staging, out, error);
  if (error) {
    if (replace) fs::rename(previous, out, error);
    throw Error("make-model", out.string() + ": cannot move the new checkpoint into place: " + error.message());
  }
  if (replace) fs::remove_all(previous, error);
}

}  // namespace

void random_checkpoint_write(const RandomCheckpointOptions& options, const CheckpointProgress& progress) {
  const ModelPreset& preset = model_preset(options.preset);
  fs::path out = fs::path(options.out_dir).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();
  if (out.empty()) throw Error("make-model", "--out is empty (pass the folder to write)");
  check_destination(out, options.force);
  const std::vector<Component> components = preset_components(preset);

  if (out.has_parent_path()) create_folder(out.parent_path());
  const fs::path staging = out.string() + ".tmp-" + std::to_string(::getpid());
  std::error_code ignored;
  fs::remove_all(staging, ignored);
  try {
    create_folder(staging);
    write_json_text(staging / "model_index.json", preset.model_index);
    create_folder(staging / "scheduler");
    write_json_text(staging / "scheduler" / "scheduler_config.json", preset.scheduler);
    // The tokenizer goes before the weights: a bad --tokenizer fails before minutes of writing.
    create_folder(staging / "tokenizer");
    if (options.tokenizer_dir.empty()) {
      tokenizer_folder_write_minimal((staging / "tokenizer").string(), preset.tokenizer_pad);
      progress("tokenizer: minimal byte-level vocabulary (514 tokens, pad '" + preset.tokenizer_pad + "')");
    } else {
      tokenizer_folder_copy(options.tokenizer_dir, (staging / "tokenizer").string());
      progress("tokenizer: copied from " + options.tokenizer_dir);
    }
    for (const auto& component : components) write_component(staging, component, options.seed, progress);
    commit_folder(staging, out);
  } catch (...) {
    fs::remove_all(staging, ignored);
    throw;
  }
  progress("wrote " + preset.name + " checkpoint (seed " + std::to_string(options.seed) + ") to " + out.string());
}

}  // namespace websd
