// The image autoencoder's configuration (diffusers' AutoencoderKL, vae/config.json), restricted to what
// SD 1.x and 2.x use, with that class's defaults. Value type; thread-safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace websd {

struct VaeConfig {
  std::int64_t in_channels = 3;
  std::int64_t out_channels = 3;
  std::int64_t latent_channels = 4;
  std::vector<std::int64_t> block_out_channels = {64};  // one DownEncoderBlock2D / UpDecoderBlock2D each
  std::int64_t layers_per_block = 1;                    // encoder resnets per block (decoder has one more)
  std::int64_t norm_num_groups = 32;
  // Tile size for tiled decoding in diffusers (an int or a pair there); websd does not tile, and
  // keeps the first entry as diffusers does.
  std::int64_t sample_size = 32;
  double scaling_factor = 0.18215;      // latents = encode(x) * scaling_factor
  bool mid_block_add_attention = true;  // self-attention in both mid blocks
  bool use_quant_conv = true;           // 1x1 conv after the encoder
  bool use_post_quant_conv = true;      // 1x1 conv before the decoder
  bool force_upcast = true;             // the VAE should run in float32 even in a float16 pipeline

  std::size_t block_count() const { return block_out_channels.size(); }
  bool operator==(const VaeConfig&) const = default;
};

// Parses a config object; `origin` (usually the file path) prefixes error messages. Throws websd::Error
// naming the key and value for anything websd does not support and for block lists of different lengths.
VaeConfig vae_config_from_json(const nlohmann::json& config, const std::string& origin);
// Reads and parses vae/config.json.
VaeConfig vae_config_read(const std::string& path);

}  // namespace websd
