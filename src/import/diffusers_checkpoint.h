// A Stable Diffusion checkpoint opened for reading, as diffusers components. Two forms:
// - a diffusers pipeline folder: model_index.json names the components and their classes; each model
//   component (text_encoder, unet, vae, ...) is opened with its config.json and memory-mapped
//   safetensors weights (see checkpoint_component.h); tokenizer, scheduler and image processor
//   components are exposed as folders for the modules that read them. Optional components
//   (safety_checker, feature_extractor, image_encoder) whose folders were deleted are left out.
// - a single-file checkpoint (`*.safetensors` in the original LDM layout, see ldm_names.h): the
//   text_encoder, unet and vae components are views into the one mapped file, with configs read from
//   it (single_file_architecture.h); the tokenizer is the one websd embedded in it, --tokenizer, or
//   websd's bundled CLIP vocabulary, and the scheduler config is made for the model family.
// PyTorch pickles (.ckpt, .pt, .bin, .pth) are refused: unpickling can run code.
//
//   const auto checkpoint = DiffusersCheckpoint::open("/models/sd15");
//   const auto& unet = checkpoint.component("unet");
//   const auto specs = param_specs(unet_params(unet_config_from_json(unet.config(), unet.dir())));
//   const auto params = unet.bind(specs);  // throws listing every missing/unexpected/misshapen tensor
//   params[0].location.file->read_f32_into(*params[0].location.entry, buffer);
//
// Ownership: owns every component (and so every mapping). Thread-safety: immutable after open;
// concurrent reads are safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "import/checkpoint_component.h"
#include "import/import_options.h"

namespace websd {

class DiffusersCheckpoint {
 public:
  // `path`: a diffusers folder or a single .safetensors file. Throws websd::Error naming the file
  // (and tensor) for a missing folder or model_index.json, a component listed but absent, a missing
  // config.json, missing or pickle-only weights, a broken shard index, a corrupt safetensors file, a
  // single file websd cannot read (see single_file_architecture.h) or whose tensors do not match its
  // networks (every missing, unexpected and misshapen tensor named), and options that do not apply.
  static DiffusersCheckpoint open(const std::string& path, const ImportOptions& options = {});

  // The folder or the single file.
  const std::string& dir() const { return dir_; }
  bool is_single_file() const { return single_file_; }
  const nlohmann::json& model_index() const { return model_index_; }
  // "StableDiffusionPipeline", or "" if model_index.json does not say.
  const std::string& pipeline_class() const { return pipeline_class_; }
  // In model_index.json's order (alphabetical, as diffusers writes it).
  const std::vector<CheckpointComponent>& components() const { return components_; }
  // nullptr if the checkpoint has no such component.
  const CheckpointComponent* find(std::string_view name) const;
  // Throws websd::Error naming model_index.json and the components it lists.
  const CheckpointComponent& component(std::string_view name) const;

  // Where the tokenizer comes from: a folder to load (the model folder, whose tokenizer/ is used, or
  // --tokenizer), else `files` (name -> content of a Hugging Face tokenizer folder, as websd embeds in
  // single files), else (both empty) websd's bundled CLIP vocabulary padded with `bundled_pad`.
  struct TokenizerSource {
    std::string folder;
    std::map<std::string, std::string> files;
    std::string bundled_pad;
    std::string origin;  // for messages
  };
  const TokenizerSource& tokenizer() const { return tokenizer_; }
  // scheduler_config.json of the model (--scheduler-config, the folder's scheduler/, or made for a
  // single file); null when a folder has none.
  const nlohmann::json& scheduler_config() const { return scheduler_config_; }
  const std::string& scheduler_config_origin() const { return scheduler_origin_; }
  // What websd assumed while reading a single file, one sentence each, for the user to see.
  const std::vector<std::string>& notes() const { return notes_; }
  // Single files: "SD 1.x" or "SD 2.x", and where the network configs came from.
  const std::string& family() const { return family_; }
  const std::string& config_source() const { return config_source_; }

 private:
  static DiffusersCheckpoint open_folder(const std::string& dir, const ImportOptions& options);
  // Defined in single_file_checkpoint.cpp.
  static DiffusersCheckpoint open_single_file(const std::string& path, const ImportOptions& options);

  std::string dir_;
  bool single_file_ = false;
  TokenizerSource tokenizer_;
  nlohmann::json scheduler_config_;
  std::string scheduler_origin_;
  std::vector<std::string> notes_;
  std::string family_;
  std::string config_source_;
  nlohmann::json model_index_;
  std::string pipeline_class_;
  std::vector<CheckpointComponent> components_;
};

}  // namespace websd
