// The denoising UNet's configuration (diffusers' UNet2DConditionModel, unet/config.json), restricted to
// what SD 1.x and 2.x use, with that class's defaults. Lists are resolved to one value per down block
// (index i = down_blocks.i); up block i uses entry (blocks - 1 - i), the mid block uses the last entry.
// Value type; thread-safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace websd {

// CrossAttnDownBlock2D / CrossAttnUpBlock2D vs DownBlock2D / UpBlock2D.
enum class UNetBlockType { kCrossAttn, kPlain };
// mid_block_type: UNetMidBlock2DCrossAttn (resnet, transformer, resnet), UNetMidBlock2D (one resnet,
// as get_mid_block builds it with num_layers=0), or null (no mid block).
enum class UNetMidBlockType { kCrossAttn, kResnetOnly, kNone };

struct UNetConfig {
  // Latent (height, width) it was trained at: sample_size is an int (square) or a pair.
  std::optional<std::pair<std::int64_t, std::int64_t>> sample_size;
  std::int64_t in_channels = 4;
  std::int64_t out_channels = 4;
  std::vector<UNetBlockType> down_block_types;
  std::vector<UNetBlockType> up_block_types;
  UNetMidBlockType mid_block_type = UNetMidBlockType::kCrossAttn;
  std::vector<std::int64_t> block_out_channels;
  std::vector<std::int64_t> layers_per_block;  // resnets per down block (up blocks have one more)
  // BasicTransformerBlocks of each attention, per block and layer (transformer_layers_per_block and
  // reverse_transformer_layers_per_block resolved as diffusers does): down block i has
  // layers_per_block[i] entries, up block i has layers_per_block[blocks - 1 - i] + 1.
  std::vector<std::vector<std::int64_t>> down_transformer_layers;
  std::vector<std::vector<std::int64_t>> up_transformer_layers;
  std::int64_t mid_transformer_layers = 1;
  // Heads per block. diffusers' config key `attention_head_dim` really holds the head COUNT for SD
  // (UNet2DConditionModel sets num_attention_heads = attention_head_dim); see head_dim().
  std::vector<std::int64_t> attention_heads;
  std::int64_t cross_attention_dim = 1280;  // one width for every block (a per-block list must agree)
  bool use_linear_projection = false;       // proj_in/proj_out are Linear [C,C] instead of 1x1 Conv [C,C,1,1]
  bool upcast_attention = false;            // compute attention scores in float32
  bool flip_sin_to_cos = true;
  double freq_shift = 0;
  std::int64_t norm_num_groups = 32;
  double norm_eps = 1e-5;
  std::int64_t time_embed_dim = 0;  // time_embedding_dim, or block_out_channels[0] * 4
  std::int64_t conv_in_kernel = 3;  // odd; padding (kernel - 1) / 2 keeps the size
  std::int64_t conv_out_kernel = 3;
  std::int64_t downsample_padding = 1;  // 0: pad right/bottom by one pixel first (Downsample2D)

  std::size_t block_count() const { return block_out_channels.size(); }
  // Per-head width of the attentions in down block `block` (channels / heads).
  std::int64_t head_dim(std::size_t block) const { return block_out_channels[block] / attention_heads[block]; }
  bool operator==(const UNetConfig&) const = default;
};

// Parses a config object; `origin` (usually the file path) prefixes error messages. Throws websd::Error
// naming the key and value for anything websd does not support and for lists whose length does not
// match the number of blocks.
UNetConfig unet_config_from_json(const nlohmann::json& config, const std::string& origin);
// Reads and parses unet/config.json.
UNetConfig unet_config_read(const std::string& path);

}  // namespace websd
