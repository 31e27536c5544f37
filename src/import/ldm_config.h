// The original LDM inference config of a single-file checkpoint (`v1-inference.yaml`,
// `v2-inference.yaml`, `v2-inference-v.yaml` from CompVis/stable-diffusion and Stability-AI/stablediffusion),
// read for what the weights cannot tell: the attention head counts, the prediction type, the noise
// schedule, the latent scale, the default image size and which text encoder layer feeds the UNet.
// Structural values (channels, blocks, depths) are also read so the importer can check them against
// the tensors. Keys the inference code ignores (training settings) are ignored here too.
// Value type; thread-safe to share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace websd {

struct LdmConfig {
  std::string origin;  // the file, for messages

  // model.params
  std::optional<std::string> parameterization;  // "eps" or "v"
  std::optional<double> linear_start, linear_end;
  std::optional<std::int64_t> timesteps;
  std::optional<double> scale_factor;
  std::optional<std::int64_t> image_size;  // latent side the model was trained at

  // model.params.unet_config.params
  std::optional<std::int64_t> in_channels, out_channels, model_channels, context_dim;
  std::optional<std::vector<std::int64_t>> channel_mult, attention_resolutions;
  std::optional<std::vector<std::int64_t>> num_res_blocks;     // one value, or one per level
  std::optional<std::vector<std::int64_t>> transformer_depth;  // one value, or one per level
  std::optional<std::int64_t> num_heads;                       // -1: use num_head_channels
  std::optional<std::int64_t> num_head_channels;               // -1: use num_heads
  std::optional<bool> use_linear_in_transformer;

  // model.params.first_stage_config.params (+ ddconfig)
  std::optional<std::int64_t> vae_embed_dim, vae_z_channels, vae_ch, vae_num_res_blocks, vae_in_channels, vae_out_ch;
  std::optional<std::vector<std::int64_t>> vae_ch_mult;

  // model.params.cond_stage_config
  std::string cond_stage_target;          // e.g. "ldm.modules.encoders.modules.FrozenCLIPEmbedder"
  std::optional<std::string> cond_layer;  // params.layer: "last", "penultimate" (OpenCLIP) or "hidden"
};

// Throws websd::Error naming the file for unreadable YAML, a missing model.params, a value of the wrong
// type, or an architecture websd does not run (SDXL's sgm configs, other conditioning).
LdmConfig ldm_config_read(const std::string& path);
LdmConfig ldm_config_parse(const std::string& text, const std::string& origin);

}  // namespace websd
