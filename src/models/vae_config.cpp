#include "models/vae_config.h"

#include <algorithm>

#include "io/json_file.h"
#include "models/config_limits.h"
#include "models/config_reader.h"

namespace websd {
namespace {

// Each entry must name `supported`; returns how many blocks the list declares.
std::size_t count_blocks(ConfigReader& reader, const std::string& key, const std::string& supported) {
  const auto types = reader.string_list(key, {supported});
  for (const auto& name : types) {
    if (name != supported) throw reader.unsupported(key, "block type '" + name + "'; supported: " + supported);
  }
  return types.size();
}

}  // namespace

VaeConfig vae_config_from_json(const nlohmann::json& config, const std::string& origin) {
  ConfigReader reader(config, "vae", origin);
  VaeConfig out;
  out.in_channels = reader.positive_int("in_channels", out.in_channels);
  out.out_channels = reader.positive_int("out_channels", out.out_channels);
  out.latent_channels = reader.positive_int("latent_channels", out.latent_channels);
  out.block_out_channels = reader.positive_int_list("block_out_channels", out.block_out_channels);
  out.layers_per_block = reader.positive_int("layers_per_block", out.layers_per_block);
  out.norm_num_groups = reader.positive_int("norm_num_groups", out.norm_num_groups);
  using namespace config_limits;
  at_most(reader, "in_channels", out.in_channels, kChannels);
  at_most(reader, "out_channels", out.out_channels, kChannels);
  at_most(reader, "latent_channels", out.latent_channels, kChannels);
  at_most(reader, "block_out_channels", static_cast<std::int64_t>(out.block_out_channels.size()), kBlocks);
  all_at_most(reader, "block_out_channels", out.block_out_channels, kChannels);
  at_most(reader, "layers_per_block", out.layers_per_block, kLayersPerBlock);
  at_most(reader, "norm_num_groups", out.norm_num_groups, kChannels);
  if (const auto sample = reader.optional_int_or_pair("sample_size")) {
    config_limits::at_most(reader, "sample_size", std::max(sample->first, sample->second), config_limits::kImageSide);
    out.sample_size = sample->first;
  }
  out.scaling_factor = reader.number("scaling_factor", out.scaling_factor);
  if (out.scaling_factor <= 0) throw reader.unsupported("scaling_factor", "expected a positive number");
  out.mid_block_add_attention = reader.flag("mid_block_add_attention", out.mid_block_add_attention);
  out.use_quant_conv = reader.flag("use_quant_conv", out.use_quant_conv);
  out.use_post_quant_conv = reader.flag("use_post_quant_conv", out.use_post_quant_conv);
  out.force_upcast = reader.flag("force_upcast", out.force_upcast);

  const std::size_t down_blocks = count_blocks(reader, "down_block_types", "DownEncoderBlock2D");
  const std::size_t up_blocks = count_blocks(reader, "up_block_types", "UpDecoderBlock2D");
  if (down_blocks != out.block_count() || up_blocks != out.block_count()) {
    throw reader.invalid("down_block_types (" + std::to_string(down_blocks) + "), up_block_types (" +
                         std::to_string(up_blocks) + ") and block_out_channels (" + std::to_string(out.block_count()) +
                         ") must have the same length");
  }
  for (const std::int64_t channels : out.block_out_channels) {
    if (channels % out.norm_num_groups != 0) {
      throw reader.invalid("block_out_channels entry " + std::to_string(channels) +
                           " is not divisible by norm_num_groups=" + std::to_string(out.norm_num_groups));
    }
  }

  reader.require_one_of("act_fn", {"silu", "swish"});  // get_activation maps both to SiLU
  // Latent statistics of other model families (SD3, Flux, SDXL variants) that SD pipelines never apply.
  reader.require("shift_factor", nullptr);
  reader.require("latents_mean", nullptr);
  reader.require("latents_std", nullptr);
  reader.require("_class_name", "AutoencoderKL");
  reader.ignore_private_keys();
  reader.finish();
  return out;
}

VaeConfig vae_config_read(const std::string& path) { return vae_config_from_json(json_read_file(path), path); }

}  // namespace websd
