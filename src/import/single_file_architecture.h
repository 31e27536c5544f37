// The networks of a single-file SD checkpoint, as diffusers config.json contents. Read, in order of
// precedence, from: the configs websd writes into the file's metadata (`websd.*.config`, exact; not
// used when --config is given), the original LDM inference YAML (--config), the tensor shapes
// (channels, blocks, layers, depths, projections, context width, which blocks attend) and the
// family's defaults for what neither tells (SD 1.x: 8 heads, quick_gelu CLIP, epsilon, 512x512;
// SD 2.x: 64-wide heads, the OpenCLIP text tower without its last layer, v_prediction at 768x768, as
// diffusers' from_single_file assumes), with the modelspec metadata (`modelspec.prediction_type`,
// `modelspec.resolution`) that kohya/SAI tools write taking precedence over the defaults.
// ImportOptions then override the prediction type and the scheduler config.
// Pure function of the file's header; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "import/import_options.h"
#include "import/ldm_names.h"
#include "io/safetensors_reader.h"

namespace websd {

struct SingleFileArchitecture {
  TextEncoderLayout text_layout = TextEncoderLayout::kHfClip;
  std::string family;                      // "SD 1.x" or "SD 2.x"
  nlohmann::json text_encoder, unet, vae;  // config.json of each network (diffusers/transformers keys)
  nlohmann::json scheduler;                // scheduler_config.json
  std::string scheduler_origin;            // where the scheduler config came from, for messages
  std::string config_source;               // where the network configs came from, for messages
  std::string tokenizer_pad;               // "<|endoftext|>" (SD 1.x) or "!" (SD 2.x)
  // OpenCLIP text tower layers the file holds after the ones used (1 for SD 2.x's "penultimate" layer).
  std::int64_t unused_text_layers = 0;
  std::vector<std::string> notes;  // assumptions a user should hear about
};

// Throws websd::Error naming the file for what is not an SD 1.x/2.x single file (SDXL, a lone UNet,
// missing networks, mixed text encoder layouts), for tensors the shapes are read from that are missing
// or misshapen, for a --config that disagrees with the tensors, and for bad options.
SingleFileArchitecture single_file_architecture(const SafetensorsFile& file, const ImportOptions& options);

// Metadata keys under which websd's single-file writer records the exact configs and tokenizer.
inline constexpr const char* kWebsdMetadataPrefix = "websd.";
std::string websd_config_metadata_key(const std::string& component);  // "websd.unet.config"
std::string websd_tokenizer_metadata_key(const std::string& file);    // "websd.tokenizer.vocab.json"

}  // namespace websd
