// Writes a complete random-weight checkpoint of a preset architecture in the diffusers folder layout:
// model_index.json, scheduler/, text_encoder/, unet/, vae/ (config.json + float16 safetensors) and
// tokenizer/. The same seed gives byte-identical files. Everything is written into a temporary sibling
// folder that is renamed to the destination at the end, so an interrupted run leaves no partial
// checkpoint; tensors are generated and written one at a time, so memory stays bounded by the largest
// tensor. Thread-compatible (writes files; run one per destination).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "models/model_presets.h"

namespace websd {

struct RandomCheckpointOptions {
  std::string preset;   // a name from model_preset_names()
  std::string out_dir;  // destination folder
  std::uint64_t seed = 0;
  std::string tokenizer_dir;  // copy this tokenizer folder; empty: write a minimal byte-level vocabulary
  bool force = false;         // replace a non-empty destination
};

// Receives one human-readable line per step (e.g. "unet: 686 tensors, ...").
using CheckpointProgress = std::function<void(const std::string& line)>;

// Throws websd::Error for an unknown preset, a destination that is a file or a non-empty folder
// (unless `force`), a tokenizer folder without tokenizer files, or any I/O failure.
void random_checkpoint_write(const RandomCheckpointOptions& options, const CheckpointProgress& progress);
// The same for an architecture given as config files (options.preset is ignored): tests write
// checkpoints of any configuration this way. Throws websd::Error for configs websd does not support.
void random_checkpoint_write(const ModelPreset& preset, const RandomCheckpointOptions& options,
                             const CheckpointProgress& progress);

}  // namespace websd
