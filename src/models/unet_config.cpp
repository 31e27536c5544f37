#include "models/unet_config.h"

#include "io/json_file.h"
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
  check_heads_divide_channels(reader, config, blocks - 1);  // the mid block's attention
}

void require_only_cross_attention_off(ConfigReader& reader, const nlohmann::json& config) {
  const auto it = config.find("only_cross_attention");
  if (it != config.end() && it->is_array()) {
    for (const auto& item : *it) {
      if (item != false) throw reader.unsupported("only_cross_attention", "supported: false");
    }
    reader.ignore({"only_cross_attention"});
    return;
  }
  reader.require("only_cross_attention", false);
}

// Keys whose only supported value is the one SD uses (null or the library default).
void require_sd_features(ConfigReader& reader) {
  reader.require("act_fn", "silu");
  reader.require("mid_block_type", "UNetMidBlock2DCrossAttn");
  reader.require("dual_cross_attention", false);
  reader.require("center_input_sample", false);
  reader.require("downsample_padding", 1);
  reader.require("mid_block_scale_factor", 1);
  reader.require("conv_in_kernel", 3);
  reader.require("conv_out_kernel", 3);
  reader.require("time_embedding_type", "positional");
  reader.require("resnet_time_scale_shift", "default");
  reader.require("resnet_skip_time_act", false);
  reader.require("resnet_out_scale_factor", 1);
  reader.require("attention_type", "default");
  reader.require("class_embeddings_concat", false);
  reader.require_one_of("mid_block_only_cross_attention", {nullptr, false});
  for (const char* key :
       {"class_embed_type", "num_class_embeds", "addition_embed_type", "addition_time_embed_dim", "encoder_hid_dim",
        "encoder_hid_dim_type", "time_cond_proj_dim", "time_embedding_act_fn", "timestep_post_act",
        "projection_class_embeddings_input_dim", "cross_attention_norm", "reverse_transformer_layers_per_block"}) {
    reader.require(key, nullptr);
  }
  // diffusers' UNet2DConditionModel itself refuses a non-null num_attention_heads.
  reader.require("num_attention_heads", nullptr);
  reader.require("_class_name", "UNet2DConditionModel");
}

}  // namespace

UNetConfig unet_config_from_json(const nlohmann::json& config, const std::string& origin) {
  ConfigReader reader(config, "unet", origin);
  UNetConfig out;
  out.sample_size = reader.optional_int("sample_size");
  out.in_channels = reader.positive_int("in_channels", out.in_channels);
  out.out_channels = reader.positive_int("out_channels", out.out_channels);
  out.down_block_types =
      parse_block_types(reader, "down_block_types",
                        {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"},
                        "CrossAttnDownBlock2D", "DownBlock2D");
  out.up_block_types = parse_block_types(
      reader, "up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"},
      "CrossAttnUpBlock2D", "UpBlock2D");
  out.block_out_channels = reader.positive_int_list("block_out_channels", {320, 640, 1280, 1280});
  const std::size_t blocks = out.block_out_channels.size();
  out.layers_per_block = reader.per_block_ints("layers_per_block", 2, blocks);
  if (config.contains("transformer_layers_per_block") && config["transformer_layers_per_block"].is_array()) {
    for (const auto& item : config["transformer_layers_per_block"]) {
      if (item.is_array()) throw reader.unsupported("transformer_layers_per_block", "nested per-layer lists");
    }
  }
  out.transformer_layers_per_block = reader.per_block_ints("transformer_layers_per_block", 1, blocks);
  out.attention_heads = reader.per_block_ints("attention_head_dim", 8, blocks);
  if (config.contains("cross_attention_dim") && !config["cross_attention_dim"].is_number()) {
    throw reader.unsupported("cross_attention_dim", "expected one integer for all blocks");
  }
  out.cross_attention_dim = reader.positive_int("cross_attention_dim", out.cross_attention_dim);
  out.use_linear_projection = reader.flag("use_linear_projection", false);
  out.upcast_attention = reader.flag("upcast_attention", false);
  out.flip_sin_to_cos = reader.flag("flip_sin_to_cos", true);
  out.freq_shift = reader.number("freq_shift", 0);
  out.norm_num_groups = reader.positive_int("norm_num_groups", 32);
  if (config.contains("norm_num_groups") && config["norm_num_groups"].is_null()) {
    throw reader.unsupported("norm_num_groups", "the output GroupNorm is required");
  }
  out.norm_eps = reader.number("norm_eps", 1e-5);
  if (out.norm_eps <= 0) throw reader.unsupported("norm_eps", "expected a positive number");
  out.time_embed_dim = reader.optional_int("time_embedding_dim").value_or(out.block_out_channels[0] * 4);
  if (out.time_embed_dim <= 0) throw reader.unsupported("time_embedding_dim", "expected a positive integer");

  require_only_cross_attention_off(reader, config);
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
