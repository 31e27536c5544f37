// Writes small diffusers checkpoint folders for the import tests: model_index.json, config.json
// files and safetensors weights of a few tensors, in the layouts real checkpoints use (text
// encoder with or without the "text_model." prefix, fp16/bf16/f32, variants, sharded UNet).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/param_spec.h"
#include "import/import_options.h"

namespace websd::test {

struct TensorToWrite {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
};

// Element i of every float tensor written here; exact in F16 and BF16.
float checkpoint_value(std::size_t i);
// Float tensors hold checkpoint_value(i); integer tensors hold i.
void write_tensors(const std::string& path, const std::vector<TensorToWrite>& tensors);
void write_json(const std::string& path, const nlohmann::json& value);
void write_text(const std::string& path, const std::string& text);

struct FolderOptions {
  DType dtype = DType::kF16;
  bool text_prefix = true;    // store text encoder names with "text_model." (real SD) or without (transformers 5)
  bool position_ids = false;  // store the text encoder's position_ids buffer (older transformers)
  std::string variant = "";   // write "<stem>.<variant>.safetensors" instead of the plain names
  int unet_shards = 1;        // > 1: a sharded UNet with diffusion_pytorch_model.safetensors.index.json
};

// The parameters (canonical names) that the folders written below hold.
std::vector<ParamSpec> text_encoder_params();
std::vector<ParamSpec> unet_params();
std::vector<ParamSpec> vae_params();

// A fresh folder in the diffusers layout: text_encoder, unet, vae, tokenizer, scheduler and a
// [null, null] safety_checker. Returns its path.
std::string write_checkpoint_folder(const std::string& tag, const FolderOptions& options = {});

// Options that read weight variant `variant`.
inline ImportOptions variant_options(const std::string& variant) {
  ImportOptions options;
  options.variant = variant;
  return options;
}

}  // namespace websd::test
