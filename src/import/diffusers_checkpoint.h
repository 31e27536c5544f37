// A diffusers pipeline folder opened for reading: model_index.json names the components and their
// classes; each model component (text_encoder, unet, vae, ...) is opened with its config.json and
// memory-mapped safetensors weights (see checkpoint_component.h); tokenizer, scheduler and image
// processor components are exposed as folders for the modules that read them. Optional components
// (safety_checker, feature_extractor, image_encoder) whose folders were deleted are left out.
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

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "import/checkpoint_component.h"

namespace websd {

struct ImportOptions {
  // Weight variant to read ("fp16", "bf16", ...); empty: the plain files, or the only variant.
  std::string variant;
};

class DiffusersCheckpoint {
 public:
  // Throws websd::Error naming the file (and tensor) for a missing folder or model_index.json,
  // a component listed but absent, a missing config.json, missing or pickle-only weights, a
  // broken shard index or a corrupt safetensors file.
  static DiffusersCheckpoint open(const std::string& dir, const ImportOptions& options = {});

  const std::string& dir() const { return dir_; }
  const nlohmann::json& model_index() const { return model_index_; }
  // "StableDiffusionPipeline", or "" if model_index.json does not say.
  const std::string& pipeline_class() const { return pipeline_class_; }
  // In model_index.json's order (alphabetical, as diffusers writes it).
  const std::vector<CheckpointComponent>& components() const { return components_; }
  // nullptr if the checkpoint has no such component.
  const CheckpointComponent* find(std::string_view name) const;
  // Throws websd::Error naming model_index.json and the components it lists.
  const CheckpointComponent& component(std::string_view name) const;

 private:
  std::string dir_;
  nlohmann::json model_index_;
  std::string pipeline_class_;
  std::vector<CheckpointComponent> components_;
};

}  // namespace websd
