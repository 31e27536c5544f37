// Named model architectures that websd can generate random-weight checkpoints for: the configuration
// files of real SD checkpoints (runwayml/stable-diffusion-v1-5, stabilityai/stable-diffusion-2-1) and
// of the tiny test model in the shared fixtures. Immutable after first use; thread-safe to read.
#pragma once

#include <string>
#include <vector>

namespace websd {

struct ModelPreset {
  std::string name;
  std::string summary;
  // JSON text of each file, with the keys and values of the original checkpoint.
  std::string model_index;    // model_index.json
  std::string scheduler;      // scheduler/scheduler_config.json
  std::string text_encoder;   // text_encoder/config.json
  std::string unet;           // unet/config.json
  std::string vae;            // vae/config.json
  std::string tokenizer_pad;  // pad token: "<|endoftext|>" for SD 1.x, "!" for SD 2.x
};

// Throws websd::Error listing the known names if `name` is not one of them.
const ModelPreset& model_preset(const std::string& name);
// "sd15", "sd21", "tiny".
std::vector<std::string> model_preset_names();

}  // namespace websd
