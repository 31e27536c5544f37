#include "models/random_checkpoint.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/safetensors_writer.h"
#include "io/staged_folder.h"
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

void write_component(const StagedFolder& root, const Component& component, std::uint64_t seed,
                     const CheckpointProgress& progress) {
  const fs::path dir = root.path() / component.name;
  root.create(dir);
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

}  // namespace

void random_checkpoint_write(const RandomCheckpointOptions& options, const CheckpointProgress& progress) {
  random_checkpoint_write(model_preset(options.preset), options, progress);
}

void random_checkpoint_write(const ModelPreset& preset, const RandomCheckpointOptions& options,
                             const CheckpointProgress& progress) {
  const std::vector<Component> components = preset_components(preset);
  StagedFolder out(options.out_dir, options.force, "make-model");
  const fs::path& staging = out.path();
  write_json_text(staging / "model_index.json", preset.model_index);
  out.create(staging / "scheduler");
  write_json_text(staging / "scheduler" / "scheduler_config.json", preset.scheduler);
  // The tokenizer goes before the weights: a bad --tokenizer fails before minutes of writing.
  out.create(staging / "tokenizer");
  if (options.tokenizer_dir.empty()) {
    tokenizer_folder_write_minimal((staging / "tokenizer").string(), preset.tokenizer_pad);
    progress("tokenizer: minimal byte-level vocabulary (514 tokens, pad '" + preset.tokenizer_pad + "')");
  } else {
    tokenizer_folder_copy(options.tokenizer_dir, (staging / "tokenizer").string());
    progress("tokenizer: copied from " + options.tokenizer_dir);
  }
  for (const auto& component : components) write_component(out, component, options.seed, progress);
  out.commit();
  progress("wrote " + preset.name + " checkpoint (seed " + std::to_string(options.seed) + ") to " +
           out.destination().string());
}

}  // namespace websd
