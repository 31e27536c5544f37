// How to open a checkpoint (see diffusers_checkpoint.h): options of `--model` that every command
// taking a model shares. Value type.
#pragma once

#include <string>

namespace websd {

struct ImportOptions {
  // Weight variant of a diffusers folder ("fp16", "bf16", ...); empty: the plain files, or the only variant.
  std::string variant;
  // A Hugging Face tokenizer folder to use instead of the model's own (a single file's embedded or
  // websd's bundled CLIP vocabulary).
  std::string tokenizer_dir;
  // A scheduler_config.json to use as the model's scheduler config.
  std::string scheduler_config;

  // Single-file checkpoints only (what their weights cannot tell):
  std::string prediction_type;  // "epsilon" or "v_prediction"; empty: from the file, --config or the family
  std::string ldm_config;       // original LDM inference YAML (v1-inference.yaml, v2-inference-v.yaml)
  bool use_ema = false;         // take the UNet from its EMA copy (model_ema.*)
};

}  // namespace websd
