#include "import/ldm_names.h"

#include <array>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

#include "core/error.h"

namespace websd {
namespace {

// Consumes `prefix` from the front of `rest` if it is there.
bool take(std::string_view& rest, std::string_view prefix) {
  if (rest.substr(0, prefix.size()) != prefix) return false;
  rest.remove_prefix(prefix.size());
  return true;
}

// Consumes "<digits>." from the front of `rest`.
std::optional<std::size_t> take_index(std::string_view& rest) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (error != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.')
    return std::nullopt;
  rest.remove_prefix(static_cast<std::size_t>(end - rest.data()) + 1);
  return value;
}

[[noreturn]] void no_place(const char* network, std::string_view name) {
  throw Error("import", std::string("the single-file layout has no place for the ") + network + " tensor '" +
                            std::string(name) + "' (a websd bug)");
}

// ResnetBlock2D's submodules in the UNet (LDM ResBlock) and in the VAE (LDM ResnetBlock).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kUNetResnetParts = {
    {{"norm1.", "in_layers.0."},
     {"conv1.", "in_layers.2."},
     {"time_emb_proj.", "emb_layers.1."},
     {"norm2.", "out_layers.0."},
     {"conv2.", "out_layers.3."},
     {"conv_shortcut.", "skip_connection."}}};
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kVaeResnetParts = {
    {{"norm1.", "norm1."},
     {"conv1.", "conv1."},
     {"norm2.", "norm2."},
     {"conv2.", "conv2."},
     {"conv_shortcut.", "nin_shortcut."}}};
// The VAE's mid-block Attention (diffusers) vs AttnBlock (LDM), whose projections are 1x1 convs.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kVaeAttentionParts = {
    {{"group_norm.", "norm."}, {"to_q.", "q."}, {"to_k.", "k."}, {"to_v.", "v."}, {"to_out.0.", "proj_out."}}};

template <std::size_t N>
std::optional<LdmName> map_part(std::string_view rest,
                                const std::array<std::pair<std::string_view, std::string_view>, N>& parts,
                                const std::string& prefix) {
  for (const auto& [diffusers, ldm] : parts) {
    std::string_view tail = rest;
    if (take(tail, diffusers)) return LdmName{prefix + std::string(ldm) + std::string(tail)};
  }
  return std::nullopt;
}

// LDM numbers the UNet's input blocks consecutively: conv_in is input_blocks.0, then each down block's
// layers, then its downsampler (all but the last block). Output blocks likewise, without conv_in.
std::size_t input_block_index(const UNetConfig& config, std::size_t block, std::size_t layer) {
  std::size_t index = 1;
  for (std::size_t b = 0; b < block; ++b) index += static_cast<std::size_t>(config.layers_per_block[b]) + 1;
  return index + layer;
}

std::size_t output_block_index(const UNetConfig& config, std::size_t block, std::size_t layer) {
  std::size_t index = 0;
  for (std::size_t b = 0; b < block; ++b) {
    index += static_cast<std::size_t>(config.layers_per_block[config.block_count() - 1 - b]) + 1;
  }
  return index + layer;
}

}  // namespace

LdmName ldm_unet_name(const UNetConfig& config, const std::string& name) {
  const std::string p = kLdmUNetPrefix;
  std::string_view rest = name;
  if (take(rest, "conv_in.")) return {p + "input_blocks.0.0." + std::string(rest)};
  if (take(rest, "time_embedding.linear_1.")) return {p + "time_embed.0." + std::string(rest)};
  if (take(rest, "time_embedding.linear_2.")) return {p + "time_embed.2." + std::string(rest)};
  if (take(rest, "conv_norm_out.")) return {p + "out.0." + std::string(rest)};
  if (take(rest, "conv_out.")) return {p + "out.2." + std::string(rest)};
  const bool down = take(rest, "down_blocks.");
  const bool up = !down && take(rest, "up_blocks.");
  if (down || up) {
    const auto block = take_index(rest);
    if (!block || *block >= config.block_count()) no_place("UNet", name);
    const auto index = [&](std::size_t layer) {
      return down ? input_block_index(config, *block, layer) : output_block_index(config, *block, layer);
    };
    const std::string blocks = p + (down ? "input_blocks." : "output_blocks.");
    std::string_view tail = rest;
    const bool resnet = take(tail, "resnets.");
    const bool attention = !resnet && take(tail, "attentions.");
    if (resnet || attention) {
      const auto layer = take_index(tail);
      if (!layer) no_place("UNet", name);
      const std::string at = blocks + std::to_string(index(*layer)) + ".";
      if (attention) return {at + "1." + std::string(tail)};
      if (const auto mapped = map_part(tail, kUNetResnetParts, at + "0.")) return *mapped;
      no_place("UNet", name);
    }
    // The sampler closes the block: its own input block going down; up, it follows the last layer's
    // resnet (.0) and attention (.1) inside the same output block.
    const std::size_t layers = static_cast<std::size_t>(
        down ? config.layers_per_block[*block] : config.layers_per_block[config.block_count() - 1 - *block] + 1);
    if (down && take(tail, "downsamplers.0.conv.")) {
      return {blocks + std::to_string(index(layers)) + ".0.op." + std::string(tail)};
    }
    if (up && take(tail, "upsamplers.0.conv.")) {
      const bool has_attention = config.up_block_types[*block] == UNetBlockType::kCrossAttn;
      return {blocks + std::to_string(index(layers - 1)) + (has_attention ? ".2" : ".1") + ".conv." +
              std::string(tail)};
    }
    no_place("UNet", name);
  }
  if (take(rest, "mid_block.")) {
    std::string_view tail = rest;
    if (take(tail, "resnets.0.")) {
      if (const auto mapped = map_part(tail, kUNetResnetParts, p + "middle_block.0.")) return *mapped;
    }
    tail = rest;
    if (take(tail, "attentions.0.")) return {p + "middle_block.1." + std::string(tail)};
    tail = rest;
    if (take(tail, "resnets.1.")) {
      if (const auto mapped = map_part(tail, kUNetResnetParts, p + "middle_block.2.")) return *mapped;
    }
  }
  no_place("UNet", name);
}

LdmName ldm_vae_name(const VaeConfig& config, const std::string& name) {
  const std::string p = kLdmVaePrefix;
  std::string_view rest = name;
  if (take(rest, "quant_conv.") || take(rest, "post_quant_conv.")) return {p + name};
  const bool encoder = take(rest, "encoder.");
  if (!encoder && !take(rest, "decoder.")) no_place("VAE", name);
  const std::string coder = p + (encoder ? "encoder." : "decoder.");
  if (take(rest, "conv_in.") || take(rest, "conv_out.")) return {p + name};
  if (take(rest, "conv_norm_out.")) return {coder + "norm_out." + std::string(rest)};
  if (take(rest, "mid_block.")) {
    std::string_view tail = rest;
    if (take(tail, "resnets.0.")) {
      if (const auto mapped = map_part(tail, kVaeResnetParts, coder + "mid.block_1.")) return *mapped;
    }
    tail = rest;
    if (take(tail, "resnets.1.")) {
      if (const auto mapped = map_part(tail, kVaeResnetParts, coder + "mid.block_2.")) return *mapped;
    }
    tail = rest;
    if (take(tail, "attentions.0.")) {
      if (auto mapped = map_part(tail, kVaeAttentionParts, coder + "mid.attn_1.")) {
        const bool projection = tail.substr(0, 11) != "group_norm.";
        mapped->conv1x1 = projection && name.size() > 7 && name.substr(name.size() - 7) == ".weight";
        return *mapped;
      }
    }
    no_place("VAE", name);
  }
  // The decoder's up blocks run from the deepest level, LDM's decoder.up from the shallowest.
  if (!take(rest, encoder ? "down_blocks." : "up_blocks.")) no_place("VAE", name);
  const auto block = take_index(rest);
  if (!block || *block >= config.block_count()) no_place("VAE", name);
  const std::size_t level = encoder ? *block : config.block_count() - 1 - *block;
  const std::string at = coder + (encoder ? "down." : "up.") + std::to_string(level) + ".";
  if (take(rest, "resnets.")) {
    const auto layer = take_index(rest);
    if (layer) {
      if (const auto mapped = map_part(rest, kVaeResnetParts, at + "block." + std::to_string(*layer) + ".")) {
        return *mapped;
      }
    }
  } else if (take(rest, encoder ? "downsamplers.0.conv." : "upsamplers.0.conv.")) {
    return {at + (encoder ? "downsample.conv." : "upsample.conv.") + std::string(rest)};
  }
  no_place("VAE", name);
}

LdmName ldm_text_encoder_name(TextEncoderLayout layout, const std::string& name) {
  if (layout == TextEncoderLayout::kHfClip) return {kLdmHfClipPrefix + name};
  const std::string p = kLdmOpenClipPrefix;
  std::string_view rest = name;
  if (!take(rest, "text_model.")) no_place("text encoder", name);
  if (rest == "embeddings.token_embedding.weight") return {p + "token_embedding.weight"};
  if (rest == "embeddings.position_embedding.weight") return {p + "positional_embedding"};
  if (take(rest, "final_layer_norm.")) return {p + "ln_final." + std::string(rest)};
  if (!take(rest, "encoder.layers.")) no_place("text encoder", name);
  const auto layer = take_index(rest);
  if (!layer) no_place("text encoder", name);
  const std::string block = p + "transformer.resblocks." + std::to_string(*layer) + ".";
  constexpr std::array<std::string_view, 3> kFused = {"self_attn.q_proj.", "self_attn.k_proj.", "self_attn.v_proj."};
  for (std::size_t part = 0; part < kFused.size(); ++part) {
    std::string_view tail = rest;
    if (take(tail, kFused[part])) return {block + "attn.in_proj_" + std::string(tail), static_cast<int>(part)};
  }
  constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kParts = {
      {{"self_attn.out_proj.", "attn.out_proj."},
       {"layer_norm1.", "ln_1."},
       {"layer_norm2.", "ln_2."},
       {"mlp.fc1.", "mlp.c_fc."},
       {"mlp.fc2.", "mlp.c_proj."}}};
  if (const auto mapped = map_part(rest, kParts, block)) return *mapped;
  no_place("text encoder", name);
}

std::string ldm_ema_name(const std::string& ldm_name) {
  std::string_view rest = ldm_name;
  take(rest, "model.");  // LitEma names the parameters of the DiffusionWrapper, "diffusion_model.*"
  std::string out = kLdmEmaPrefix;
  for (const char c : rest) {
    if (c != '.') out += c;
  }
  return out;
}

}  // namespace websd
