#include "models/unet_config.h"

#include <algorithm>

#include "io/json_file.h"
#include "models/config_limits.h"
#include "models/config_reader.h"

namespace websd {
namespace {

std::vector<UNetBlockType> parse_block_types(ConfigReader& reader, const std::string& key,
                                             const std::vector<std::string>& fallback, const std::string& cross_attn,
                                             const std::string& plain) {
  std::vector<UNetBlockType> out;
  for (const auto& name : reader.string_list(key, fallback)) {
    if (name == cross_attn) {
      out.push_back(UNetBlockType::kCrossAttn);
    } else if (name == plain) {
      out.push_back(UNetBlockType::kPlain);
    } else {
      throw reader.unsupported(key, "block type '" + name + "'; supported: " + cross_attn + ", " + plain);
    }
  }
  return out;
}

UNetMidBlockType parse_mid_block_type(ConfigReader& reader, const nlohmann::json& config) {
  const auto it = config.find("mid_block_type");
  if (it != config.end() && it->is_null()) {
    reader.ignore({"mid_block_type"});
    return UNetMidBlockType::kNone;
  }
  const std::string type =
      reader.choice("mid_block_type", "UNetMidBlock2DCrossAttn", {"UNetMidBlock2DCrossAttn", "UNetMidBlock2D"});
  return type == "UNetMidBlock2D" ? UNetMidBlockType::kResnetOnly : UNetMidBlockType::kCrossAttn;
}

// A positive integer for every one of `layers` layers: an integer repeated, or a per-layer list
// (diffusers indexes it by layer, so a longer list is accepted and its tail unused).
std::vector<std::int64_t> per_layer_counts(const ConfigReader& reader, const std::string& key,
                                           const nlohmann::json& entry, std::int64_t layers) {
  const auto positive = [&](const nlohmann::json& value) {
    const auto integer = ConfigReader::integer_value(value);
    if (!integer || *integer <= 0) {
      throw reader.unsupported(key, "expected positive integers, one per block or a list per block and layer");
    }
    config_limits::at_most(reader, key, *integer, config_limits::kTransformerLayers);
    return *integer;
  };
  if (!entry.is_array()) return std::vector<std::int64_t>(static_cast<std::size_t>(layers), positive(entry));
  if (entry.size() < static_cast<std::size_t>(layers)) {
    throw reader.unsupported(key, "a per-layer list has " + std::to_string(entry.size()) + " entries for a block of " +
                                      std::to_string(layers) + " layers");
  }
  std::vector<std::int64_t> out;
  for (std::int64_t layer = 0; layer < layers; ++layer) out.push_back(positive(entry[static_cast<std::size_t>(layer)]));
  return out;
}

// transformer_layers_per_block: an int, one per block, or (with reverse_transformer_layers_per_block
// for the up blocks, as diffusers requires) a list per block and layer. The mid block takes the last
// down block's value; up block i takes entry (blocks - 1 - i), or reverse[i] when given.
void parse_transformer_layers(ConfigReader& reader, const nlohmann::json& config, UNetConfig& out) {
  const std::size_t blocks = out.block_count();
  const std::string key = "transformer_layers_per_block";
  const std::vector<nlohmann::json> per_block = reader.per_block_values(key, 1, blocks);
  std::vector<nlohmann::json> reverse;
  if (const auto it = config.find("reverse_transformer_layers_per_block"); it != config.end() && !it->is_null()) {
    if (!it->is_array() || it->size() != blocks) {
      throw reader.unsupported("reverse_transformer_layers_per_block",
                               "expected one entry per up block: " + std::to_string(blocks) + " entries");
    }
    reverse.assign(it->begin(), it->end());
  }
  reader.ignore({"reverse_transformer_layers_per_block"});
  const bool per_layer = std::any_of(per_block.begin(), per_block.end(), [](const auto& v) { return v.is_array(); });
  if (per_layer && reverse.empty()) {
    throw reader.unsupported(key,
                             "a list per layer needs reverse_transformer_layers_per_block for the up blocks, "
                             "as diffusers requires");
  }
  out.down_transformer_layers.clear();
  out.up_transformer_layers.clear();
  for (std::size_t i = 0; i < blocks; ++i) {
    out.down_transformer_layers.push_back(per_layer_counts(reader, key, per_block[i], out.layers_per_block[i]));
  }
  out.mid_transformer_layers = per_layer_counts(reader, key, per_block.back(), 1).front();
  for (std::size_t i = 0; i < blocks; ++i) {
    const std::size_t mirror = blocks - 1 - i;
    const std::int64_t layers = out.layers_per_block[mirror] + 1;
    out.up_transformer_layers.push_back(
        reverse.empty() ? per_layer_counts(reader, key, per_block[mirror], layers)
                        : per_layer_counts(reader, "reverse_transformer_layers_per_block", reverse[i], layers));
  }
}

// cross_attention_dim: an int, or one per block. One text encoder feeds every block, so the
// entries must agree (diffusers builds such a model, but it cannot run on one context).
std::int64_t parse_cross_attention_dim(ConfigReader& reader, std::size_t blocks) {
  const std::string key = "cross_attention_dim";
  std::vector<std::int64_t> dims;
  for (const auto& value : reader.per_block_values(key, 1280, blocks)) {
    const auto dim = ConfigReader::integer_value(value);
    if (!dim || *dim <= 0) throw reader.unsupported(key, "expected a positive integer or one per block");
    dims.push_back(*dim);
  }
  if (std::adjacent_find(dims.begin(), dims.end(), std::not_equal_to<>()) != dims.end()) {
    throw reader.unsupported(key,
                             "blocks with different context widths need several text encoders; websd supports "
                             "one width for every block");
  }
  return dims.front();
}

// Odd kernels only: diffusers pads by (kernel - 1) / 2, so an even kernel shrinks the latents.
std::int64_t parse_odd_kernel(ConfigReader& reader, const std::string& key) {
  const std::int64_t kernel = reader.positive_int(key, 3);
  config_limits::at_most(reader, key, kernel, config_limits::kKernel);
  if (kernel % 2 == 0) throw reader.unsupported(key, "an even kernel changes the latent size; supported: odd sizes");
  return kernel;
}

void check_heads_divide_channels(const ConfigReader& reader, const UNetConfig& config, std::size_t block) {
  const std::int64_t channels = config.block_out_channels[block];
  const std::int64_t heads = config.attention_heads[block];
  if (channels % heads != 0) {
    throw reader.invalid("block " + std::to_string(block) + " has " + std::to_string(channels) +
                         " channels, not divisible by its " + std::to_string(heads) +
                         " attention heads (attention_head_dim holds the head count)");
  }
}

void check_block_structure(const ConfigReader& reader, const UNetConfig& config) {
  const std::size_t blocks = config.block_count();
  if (config.down_block_types.size() != blocks || config.up_block_types.size() != blocks) {
    throw reader.invalid("down_block_types (" + std::to_string(config.down_block_types.size()) + "), up_block_types (" +
                         std::to_string(config.up_block_types.size()) + ") and block_out_channels (" +
                         std::to_string(blocks) + ") must have the same length");
  }
  for (const std::int64_t channels : config.block_out_channels) {
    if (channels % config.norm_num_groups != 0) {
      throw reader.invalid("block_out_channels entry " + std::to_string(channels) +
                           " is not divisible by norm_num_groups=" + std::to_string(config.norm_num_groups));
    }
  }
  for (std::size_t i = 0; i < blocks; ++i) {
    if (config.down_block_types[i] == UNetBlockType::kCrossAttn) check_heads_divide_channels(reader, config, i);
    // Up block i mirrors down block (blocks - 1 - i): same channels, same heads.
    if (config.up_block_types[i] == UNetBlockType::kCrossAttn)
      check_heads_divide_channels(reader, config, blocks - 1 - i);
  }
  if (config.mid_block_type == UNetMidBlockType::kCrossAttn) check_heads_divide_channels(reader, config, blocks - 1);
}

// only_cross_attention: a bool or one per block; websd's attentions always attend to themselves first.
void require_only_cross_attention_off(ConfigReader& reader, std::size_t blocks) {
  for (const auto& value : reader.per_block_values("only_cross_attention", false, blocks)) {
    if (value != false) throw reader.unsupported("only_cross_attention", "supported: false, or false for every block");
  }
}

// Keys whose only supported value is the one SD uses (null or the library default).
void require_sd_features(ConfigReader& reader) {
  reader.require_one_of("act_fn", {"silu", "swish"});  // get_activation maps both to SiLU
  reader.require("dual_cross_attention", false);
  reader.require("center_input_sample", false);
  reader.require("mid_block_scale_factor", 1);
  reader.require("time_embedding_type", "positional");
  reader.require("resnet_time_scale_shift", "default");
  reader.require("resnet_skip_time_act", false);
  reader.require("resnet_out_scale_factor", 1);
  reader.require("attention_type", "default");
  reader.require("class_embeddings_concat", false);
  reader.require_one_of("mid_block_only_cross_attention", {nullptr, false});
  for (const char* key : {"class_embed_type", "num_class_embeds", "addition_embed_type", "addition_time_embed_dim",
                          "encoder_hid_dim", "encoder_hid_dim_type", "time_embedding_act_fn", "timestep_post_act",
                          "projection_class_embeddings_input_dim", "cross_attention_norm"}) {
    reader.require(key, nullptr);
  }
  // LCM-distilled UNets embed the guidance scale through this projection.
  reader.require("time_cond_proj_dim", nullptr);
  // diffusers' UNet2DConditionModel itself refuses a non-null num_attention_heads.
  reader.require("num_attention_heads", nullptr);
  reader.require("_class_name", "UNet2DConditionModel");
}

}  // namespace

UNetConfig unet_config_from_json(const nlohmann::json& config, const std::string& origin) {
  ConfigReader reader(config, "unet", origin);
  UNetConfig out;
  out.sample_size = reader.optional_int_or_pair("sample_size");
  if (out.sample_size) {
    config_limits::at_most(reader, "sample_size", std::max(out.sample_size->first, out.sample_size->second),
                           config_limits::kLatentSide);
  }
  out.in_channels = reader.positive_int("in_channels", out.in_channels);
  out.out_channels = reader.positive_int("out_channels", out.out_channels);
  config_limits::at_most(reader, "in_channels", out.in_channels, config_limits::kChannels);
  config_limits::at_most(reader, "out_channels", out.out_channels, config_limits::kChannels);
  out.down_block_types =
      parse_block_types(reader, "down_block_types",
                        {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"},
                        "CrossAttnDownBlock2D", "DownBlock2D");
  out.up_block_types = parse_block_types(
      reader, "up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"},
      "CrossAttnUpBlock2D", "UpBlock2D");
  out.mid_block_type = parse_mid_block_type(reader, config);
  out.block_out_channels = reader.positive_int_list("block_out_channels", {320, 640, 1280, 1280});
  const std::size_t blocks = out.block_out_channels.size();
  config_limits::at_most(reader, "block_out_channels", static_cast<std::int64_t>(blocks), config_limits::kBlocks);
  config_limits::all_at_most(reader, "block_out_channels", out.block_out_channels, config_limits::kChannels);
  out.layers_per_block = reader.per_block_ints("layers_per_block", 2, blocks);
  config_limits::all_at_most(reader, "layers_per_block", out.layers_per_block, config_limits::kLayersPerBlock);
  parse_transformer_layers(reader, config, out);
  out.attention_heads = reader.per_block_ints("attention_head_dim", 8, blocks);
  config_limits::all_at_most(reader, "attention_head_dim", out.attention_heads, config_limits::kHeads);
  out.cross_attention_dim = parse_cross_attention_dim(reader, blocks);
  config_limits::at_most(reader, "cross_attention_dim", out.cross_attention_dim, config_limits::kChannels);
  out.use_linear_projection = reader.flag("use_linear_projection", false);
  out.upcast_attention = reader.flag("upcast_attention", false);
  out.flip_sin_to_cos = reader.flag("flip_sin_to_cos", true);
  out.freq_shift = reader.number("freq_shift", 0);
  out.norm_num_groups = reader.positive_int("norm_num_groups", 32);
  config_limits::at_most(reader, "norm_num_groups", out.norm_num_groups, config_limits::kChannels);
  if (config.contains("norm_num_groups") && config["norm_num_groups"].is_null()) {
    throw reader.unsupported("norm_num_groups", "the output GroupNorm is required");
  }
  out.norm_eps = reader.number("norm_eps", 1e-5);
  if (out.norm_eps <= 0) throw reader.unsupported("norm_eps", "expected a positive number");
  out.time_embed_dim = reader.optional_int("time_embedding_dim").value_or(out.block_out_channels[0] * 4);
  if (out.time_embed_dim <= 0) throw reader.unsupported("time_embedding_dim", "expected a positive integer");
  config_limits::at_most(reader, "time_embedding_dim", out.time_embed_dim, 4 * config_limits::kChannels);
  out.conv_in_kernel = parse_odd_kernel(reader, "conv_in_kernel");
  out.conv_out_kernel = parse_odd_kernel(reader, "conv_out_kernel");
  // Downsample2D pads 1 on every side, or (padding 0) one pixel right and bottom: both halve the
  // latents; a larger padding breaks the skip connections' sizes.
  const std::optional<std::int64_t> padding = reader.optional_int("downsample_padding");
  out.downsample_padding = padding.value_or(1);
  if (out.downsample_padding != 0 && out.downsample_padding != 1) {
    throw reader.unsupported("downsample_padding", "supported: 0 or 1 (larger paddings change the skip sizes)");
  }

  require_only_cross_attention_off(reader, blocks);
  require_sd_features(reader);
  reader.ignore_private_keys();
  // Dropout is inactive at inference; the head count of the "text" addition embedding is unused without it.
  reader.ignore({"dropout", "addition_embed_type_num_heads"});
  reader.finish();
  check_block_structure(reader, out);
  return out;
}

UNetConfig unet_config_read(const std::string& path) { return unet_config_from_json(json_read_file(path), path); }

}  // namespace websd
