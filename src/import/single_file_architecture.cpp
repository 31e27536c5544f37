#include "import/single_file_architecture.h"

#include <algorithm>
#include <optional>

#include "core/error.h"
#include "import/ldm_config.h"
#include "io/json_file.h"
#include "models/model_presets.h"

namespace websd {
namespace {

using Json = nlohmann::json;

const std::string kUNet = kLdmUNetPrefix;
const std::string kVae = kLdmVaePrefix;
const std::string kOpenClip = kLdmOpenClipPrefix;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// Header lookups whose errors say which part of which network a missing tensor belongs to.
class Tensors {
 public:
  explicit Tensors(const SafetensorsFile& file) : file_(file) {}

  bool has(const std::string& name) const { return file_.find(name) != nullptr; }
  // The entry, which the caller knows exists.
  const SafetensorsEntry* entry(const std::string& name) const { return file_.find(name); }

  bool has_prefix(std::string_view prefix) const {
    return std::any_of(file_.entries().begin(), file_.entries().end(),
                       [&](const SafetensorsEntry& entry) { return starts_with(entry.name, prefix); });
  }

  const Shape& shape(const std::string& name, const std::string& what, std::size_t rank) const {
    const SafetensorsEntry* entry = file_.find(name);
    if (entry == nullptr) {
      fail("has no tensor " + safetensors_quote_name(name) + " (" + what +
           "); is it a complete SD 1.x/2.x checkpoint?");
    }
    if (entry->shape.size() != rank || std::find(entry->shape.begin(), entry->shape.end(), 0) != entry->shape.end()) {
      fail("tensor " + safetensors_quote_name(name) + " (" + what + ") has shape " + shape_to_string(entry->shape) +
           ", expected " + std::to_string(rank) + " non-zero dimensions");
    }
    return entry->shape;
  }

  // How many of name_of(0), name_of(1), ... exist, in a row.
  template <typename NameOf>
  std::int64_t count(const NameOf& name_of) const {
    std::int64_t n = 0;
    while (has(name_of(n))) ++n;
    return n;
  }

  [[noreturn]] void fail(const std::string& what) const { throw Error("import", file_.path() + ": " + what); }

 private:
  const SafetensorsFile& file_;
};

std::string at(std::int64_t index) { return std::to_string(index) + "."; }

// An int when every entry is the same (as diffusers' own configs write it), else the list.
Json int_or_list(const std::vector<std::int64_t>& values) {
  if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end()) return values.front();
  return values;
}

// --config's value, checked against what the tensors say when both exist.
void check_agrees(const Tensors& tensors, const LdmConfig* yaml, const std::string& key,
                  const std::optional<std::vector<std::int64_t>>& said, const std::vector<std::int64_t>& read) {
  if (yaml == nullptr || !said) return;
  const bool same =
      *said == read ||
      (said->size() == 1 && std::all_of(read.begin(), read.end(), [&](std::int64_t v) { return v == said->front(); }));
  if (!same) {
    tensors.fail("--config " + yaml->origin + " says " + key + "=" + json_preview(Json(*said)) +
                 " but the tensors have " + json_preview(Json(read)) + " (the config belongs to another model)");
  }
}

std::optional<std::vector<std::int64_t>> one(const std::optional<std::int64_t>& value) {
  if (!value) return std::nullopt;
  return std::vector<std::int64_t>{*value};
}

struct Family {
  TextEncoderLayout layout = TextEncoderLayout::kHfClip;
  std::string hf_prefix;  // kHfClip: "cond_stage_model.transformer.text_model." or without "text_model."
  bool sd2() const { return layout == TextEncoderLayout::kOpenClip; }
};

Family detect_family(const Tensors& tensors) {
  if (tensors.has_prefix("conditioner.embedders.")) {
    tensors.fail("an SDXL checkpoint (conditioner.embedders.*); websd runs SD 1.x and 2.x");
  }
  if (!tensors.has_prefix(kUNet)) {
    if (tensors.has("input_blocks.0.0.weight") || tensors.has("conv_in.weight")) {
      tensors.fail(
          "holds a lone UNet, not a whole single-file checkpoint (pass the diffusers folder it belongs to, "
          "or a checkpoint with model.diffusion_model.*, first_stage_model.* and cond_stage_model.*)");
    }
    tensors.fail("holds no UNet (model.diffusion_model.*): not a single-file Stable Diffusion checkpoint");
  }
  if (tensors.has(kUNet + "label_emb.0.0.weight")) {
    tensors.fail(
        "the UNet has a class embedding (model.diffusion_model.label_emb.*: unCLIP or SDXL); websd runs SD "
        "1.x and 2.x text-to-image UNets");
  }
  if (!tensors.has_prefix(kVae)) {
    tensors.fail("holds no VAE (first_stage_model.*); websd needs the whole checkpoint (UNet, VAE and text encoder)");
  }
  const bool hf = tensors.has_prefix(kLdmHfClipPrefix);
  const bool open = tensors.has_prefix(kOpenClip);
  if (hf && open) {
    tensors.fail(
        "holds two text encoders, SD 1.x's CLIP (cond_stage_model.transformer.*) and SD 2.x's OpenCLIP "
        "(cond_stage_model.model.*): tensors of two model families were mixed");
  }
  if (!hf && !open) {
    tensors.fail(
        "holds no text encoder (cond_stage_model.transformer.* for SD 1.x or cond_stage_model.model.* for "
        "SD 2.x); websd needs the whole checkpoint");
  }
  Family family;
  family.layout = open ? TextEncoderLayout::kOpenClip : TextEncoderLayout::kHfClip;
  const std::string with = std::string(kLdmHfClipPrefix) + "text_model.";
  family.hf_prefix = tensors.has_prefix(with) ? with : kLdmHfClipPrefix;
  return family;
}

Json infer_text_encoder(const Tensors& tensors, const Family& family, const LdmConfig* yaml,
                        std::int64_t& unused_layers) {
  const std::string p = family.sd2() ? kOpenClip : family.hf_prefix;
  const Shape& tokens =
      tensors.shape(p + (family.sd2() ? "token_embedding.weight" : "embeddings.token_embedding.weight"),
                    "the text encoder's token embedding", 2);
  const Shape& positions =
      tensors.shape(p + (family.sd2() ? "positional_embedding" : "embeddings.position_embedding.weight"),
                    "the text encoder's position embedding", 2);
  const std::int64_t width = tokens[1];
  std::int64_t layers = 0, inner = 0;
  const std::optional<std::string> layer = yaml != nullptr ? yaml->cond_layer : std::nullopt;
  if (family.sd2()) {
    const std::int64_t blocks =
        tensors.count([&](std::int64_t i) { return p + "transformer.resblocks." + at(i) + "attn.in_proj_weight"; });
    // FrozenOpenCLIPEmbedder(layer="penultimate"), SD 2.x's setting, skips the last block.
    if (layer && *layer != "penultimate" && *layer != "last") {
      tensors.fail("--config " + yaml->origin + ": cond_stage_config layer '" + *layer +
                   "' is not supported (penultimate or last)");
    }
    unused_layers = layer == "last" ? 0 : 1;
    layers = blocks - unused_layers;
    inner = tensors.shape(p + "transformer.resblocks.0.mlp.c_fc.weight", "the text encoder's first MLP", 2)[0];
  } else {
    if (layer && *layer != "last") {
      tensors.fail("--config " + yaml->origin + ": cond_stage_config layer '" + *layer +
                   "' is not supported: websd runs SD 1.x's CLIP to its last layer and final layer norm");
    }
    layers = tensors.count([&](std::int64_t i) { return p + "encoder.layers." + at(i) + "self_attn.q_proj.weight"; });
    inner = tensors.shape(p + "encoder.layers.0.mlp.fc1.weight", "the text encoder's first MLP", 2)[0];
  }
  if (layers < 1) tensors.fail("the text encoder has no layers to run");
  // CLIP ViT-L/14 (SD 1.x) and OpenCLIP ViT-H/14 (SD 2.x) both have 64-wide heads.
  if (width % 64 != 0) {
    tensors.fail("the text encoder is " + std::to_string(width) +
                 " wide, not a multiple of CLIP's 64-wide heads: its head count cannot be known");
  }
  return {{"_class_name", "CLIPTextModel"},
          {"architectures", {"CLIPTextModel"}},
          {"model_type", "clip_text_model"},
          {"hidden_act", family.sd2() ? "gelu" : "quick_gelu"},
          {"hidden_size", width},
          {"intermediate_size", inner},
          {"num_hidden_layers", layers},
          {"num_attention_heads", width / 64},
          {"max_position_embeddings", positions[0]},
          {"vocab_size", tokens[0]},
          {"layer_norm_eps", 1e-5},
          {"projection_dim", family.sd2() ? 512 : 768},
          {"bos_token_id", 49406},
          {"eos_token_id", 49407},
          {"pad_token_id", 1}};
}

// Walks LDM's input blocks: each level's resnets (with an attention when the level attends), then a
// downsampler between levels. The up path mirrors it in LDM, so the up block types are the reverse.
Json infer_unet(const Tensors& tensors, const Family& family, const LdmConfig* yaml, std::int64_t sample_size,
                bool v_prediction) {
  const Shape& conv_in = tensors.shape(kUNet + "input_blocks.0.0.weight", "the UNet's conv_in", 4);
  const Shape& conv_out = tensors.shape(kUNet + "out.2.weight", "the UNet's conv_out", 4);
  const Shape& time = tensors.shape(kUNet + "time_embed.0.weight", "the UNet's time embedding", 2);
  std::vector<std::int64_t> channels, layers, depths;
  std::vector<bool> attends;
  std::optional<bool> linear;
  std::optional<std::int64_t> context;
  // One attention (SpatialTransformer): its depth; records the projection kind and context width.
  const auto read_attention = [&](const std::string& block) {
    const SafetensorsEntry* proj = tensors.entry(block + "proj_in.weight");
    if (proj->shape.size() != 2 && proj->shape.size() != 4) {
      tensors.fail("tensor " + safetensors_quote_name(proj->name) + " has shape " + shape_to_string(proj->shape) +
                   ", expected a Linear or 1x1 convolution weight");
    }
    linear = proj->shape.size() == 2;
    context = tensors.shape(block + "transformer_blocks.0.attn2.to_k.weight", "a UNet cross-attention", 2)[1];
    return tensors.count([&](std::int64_t k) { return block + "transformer_blocks." + at(k) + "attn1.to_q.weight"; });
  };
  std::int64_t count = 0;
  for (std::int64_t i = 1;; ++i) {
    const std::string block = kUNet + "input_blocks." + at(i);
    const bool downsampler = tensors.has(block + "0.op.weight");
    if (downsampler || !tensors.has(block + "0.in_layers.2.weight")) {
      if (count == 0) break;
      layers.push_back(count);
      count = 0;
      if (downsampler) continue;
      break;
    }
    if (count++ == 0) {
      channels.push_back(tensors.shape(block + "0.in_layers.2.weight", "a UNet resnet's conv1", 4)[0]);
      attends.push_back(false);
      depths.push_back(1);
    }
    if (tensors.has(block + "1.proj_in.weight")) {
      attends.back() = true;
      depths.back() = read_attention(block + "1.");
    }
  }
  if (channels.empty()) tensors.fail("the UNet has no input blocks (model.diffusion_model.input_blocks.1.*)");
  const std::size_t levels = channels.size();
  Json mid_type = nullptr;
  std::int64_t mid_depth = 1;
  if (tensors.has(kUNet + "middle_block.1.proj_in.weight")) {
    mid_type = "UNetMidBlock2DCrossAttn";
    mid_depth = read_attention(kUNet + "middle_block.1.");
  } else if (tensors.has_prefix(kUNet + "middle_block.")) {
    tensors.fail(
        "the UNet's middle block has no attention (model.diffusion_model.middle_block.1.proj_in.weight): "
        "not an SD 1.x/2.x UNet");
  }
  // A level without attention takes 1, the last one the mid block's depth (diffusers' [-1]).
  if (!attends.back()) depths.back() = mid_depth;
  std::vector<std::string> down_types, up_types;
  for (const bool attention : attends) down_types.push_back(attention ? "CrossAttnDownBlock2D" : "DownBlock2D");
  for (auto it = attends.rbegin(); it != attends.rend(); ++it)
    up_types.push_back(*it ? "CrossAttnUpBlock2D" : "UpBlock2D");

  // Head counts are not in the weights: LDM configs give num_heads (SD 1.x: 8) or
  // num_head_channels (SD 2.x: 64); diffusers' attention_head_dim holds the count per block.
  Json heads;
  const std::optional<std::int64_t> num_heads = yaml != nullptr ? yaml->num_heads : std::nullopt;
  std::optional<std::int64_t> head_width = yaml != nullptr ? yaml->num_head_channels : std::nullopt;
  if (num_heads && *num_heads > 0) {
    heads = *num_heads;
  } else {
    if (!head_width || *head_width <= 0) head_width = family.sd2() ? 64 : 0;
    if (*head_width == 0) {
      heads = 8;
    } else {
      std::vector<std::int64_t> per_block;
      for (std::size_t i = 0; i < levels; ++i) {
        const bool used = attends[i] || (i + 1 == levels && !mid_type.is_null());
        if (used && channels[i] % *head_width != 0) {
          tensors.fail("UNet level " + std::to_string(i) + " has " + std::to_string(channels[i]) +
                       " channels, not a multiple of " + std::to_string(*head_width) +
                       "-wide heads: pass --config with the model's num_heads or num_head_channels");
        }
        per_block.push_back(std::max<std::int64_t>(1, channels[i] / *head_width));
      }
      heads = int_or_list(per_block);
    }
  }
  if (yaml != nullptr) {
    std::vector<std::int64_t> mults;
    for (const std::int64_t c : channels) mults.push_back(c / conv_in[0]);
    check_agrees(tensors, yaml, "model_channels", one(yaml->model_channels), {conv_in[0]});
    check_agrees(tensors, yaml, "channel_mult", yaml->channel_mult, mults);
    check_agrees(tensors, yaml, "num_res_blocks", yaml->num_res_blocks, layers);
    check_agrees(tensors, yaml, "in_channels", one(yaml->in_channels), {conv_in[1]});
    check_agrees(tensors, yaml, "out_channels", one(yaml->out_channels), {conv_out[0]});
    if (context) check_agrees(tensors, yaml, "context_dim", one(yaml->context_dim), {*context});
    if (yaml->use_linear_in_transformer && linear && *yaml->use_linear_in_transformer != *linear) {
      tensors.fail("--config " + yaml->origin + " says use_linear_in_transformer=" + (*linear ? "False" : "True") +
                   " but the tensors' proj_in is the other kind");
    }
  }
  Json config = {{"_class_name", "UNet2DConditionModel"},
                 {"sample_size", sample_size},
                 {"in_channels", conv_in[1]},
                 {"out_channels", conv_out[0]},
                 {"down_block_types", down_types},
                 {"up_block_types", up_types},
                 {"mid_block_type", mid_type},
                 {"block_out_channels", channels},
                 {"layers_per_block", int_or_list(layers)},
                 {"transformer_layers_per_block", int_or_list(depths)},
                 {"attention_head_dim", heads},
                 {"cross_attention_dim", context.value_or(768)},
                 {"use_linear_projection", linear.value_or(false)},
                 // websd computes attention scores in float32 anyway; recorded as the SD 2.x 768-v models set it.
                 {"upcast_attention", family.sd2() && v_prediction},
                 {"conv_in_kernel", conv_in[2]},
                 {"conv_out_kernel", conv_out[2]}};
  if (time[0] != conv_in[0] * 4) config["time_embedding_dim"] = time[0];
  return config;
}

Json infer_vae(const Tensors& tensors, const LdmConfig* yaml, std::int64_t image_size) {
  const std::string e = kVae + "encoder.";
  const Shape& conv_in = tensors.shape(e + "conv_in.weight", "the VAE encoder's conv_in", 4);
  std::vector<std::int64_t> channels;
  for (std::int64_t level = 0; tensors.has(e + "down." + at(level) + "block.0.conv1.weight"); ++level) {
    channels.push_back(tensors.shape(e + "down." + at(level) + "block.0.conv1.weight", "a VAE resnet's conv1", 4)[0]);
  }
  if (channels.empty()) tensors.fail("the VAE encoder has no blocks (first_stage_model.encoder.down.0.*)");
  const std::int64_t layers =
      tensors.count([&](std::int64_t l) { return e + "down.0.block." + at(l) + "conv1.weight"; });
  const Shape& moments = tensors.shape(e + "conv_out.weight", "the VAE encoder's conv_out", 4);
  const Shape& out = tensors.shape(kVae + "decoder.conv_out.weight", "the VAE decoder's conv_out", 4);
  if (moments[0] % 2 != 0) tensors.fail("the VAE encoder's conv_out has an odd channel count (mean and log-variance)");
  std::vector<std::int64_t> mults;
  for (const std::int64_t c : channels) mults.push_back(c / conv_in[0]);
  check_agrees(tensors, yaml, "ddconfig.ch", yaml != nullptr ? one(yaml->vae_ch) : std::nullopt, {conv_in[0]});
  check_agrees(tensors, yaml, "ddconfig.ch_mult", yaml != nullptr ? yaml->vae_ch_mult : std::nullopt, mults);
  check_agrees(tensors, yaml, "ddconfig.num_res_blocks", yaml != nullptr ? one(yaml->vae_num_res_blocks) : std::nullopt,
               {layers});
  check_agrees(tensors, yaml, "ddconfig.z_channels", yaml != nullptr ? one(yaml->vae_z_channels) : std::nullopt,
               {moments[0] / 2});
  return {{"_class_name", "AutoencoderKL"},
          {"in_channels", conv_in[1]},
          {"out_channels", out[0]},
          {"latent_channels", moments[0] / 2},
          {"block_out_channels", channels},
          {"down_block_types", std::vector<std::string>(channels.size(), "DownEncoderBlock2D")},
          {"up_block_types", std::vector<std::string>(channels.size(), "UpDecoderBlock2D")},
          {"layers_per_block", layers},
          {"norm_num_groups", 32},  // LDM's Normalize is GroupNorm(32)
          {"sample_size", image_size},
          {"scaling_factor", yaml != nullptr && yaml->scale_factor ? *yaml->scale_factor : 0.18215},
          {"mid_block_add_attention", tensors.has(e + "mid.attn_1.q.weight")},
          {"use_quant_conv", tensors.has(kVae + "quant_conv.weight")},
          {"use_post_quant_conv", tensors.has(kVae + "post_quant_conv.weight")}};
}

std::string parse_prediction_type(const std::string& value, const std::string& origin) {
  if (value == "epsilon" || value == "eps") return "epsilon";
  if (value == "v_prediction" || value == "v") return "v_prediction";
  throw Error("import", origin + ": prediction type '" + value + "' is not supported (epsilon or v_prediction)");
}

// "768x768" (width x height) from modelspec.resolution; nullopt if absent or malformed.
std::optional<std::int64_t> modelspec_height(const std::map<std::string, std::string>& metadata) {
  const auto it = metadata.find("modelspec.resolution");
  if (it == metadata.end()) return std::nullopt;
  const std::size_t x = it->second.find('x');
  if (x == std::string::npos) return std::nullopt;
  try {
    return std::stoll(it->second.substr(x + 1));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The configs websd's writer recorded, if all three networks' are there.
bool read_websd_metadata(const SafetensorsFile& file, SingleFileArchitecture& out) {
  const auto& metadata = file.metadata();
  for (const char* component : {"text_encoder", "unet", "vae"}) {
    if (metadata.count(websd_config_metadata_key(component)) == 0) return false;
  }
  const auto parse = [&](const std::string& component) {
    return json_parse(metadata.at(websd_config_metadata_key(component)),
                      file.path() + " metadata " + websd_config_metadata_key(component));
  };
  out.text_encoder = parse("text_encoder");
  out.unet = parse("unet");
  out.vae = parse("vae");
  if (metadata.count(websd_config_metadata_key("scheduler")) != 0) {
    out.scheduler = parse("scheduler");
    out.scheduler_origin = file.path() + " (metadata " + websd_config_metadata_key("scheduler") + ")";
  }
  out.config_source = file.path() + " (websd metadata)";
  return true;
}

Json family_scheduler(const Family& family) {
  return json_parse(model_preset(family.sd2() ? "sd21" : "sd15").scheduler, "websd's SD scheduler preset");
}

}  // namespace

SingleFileArchitecture single_file_architecture(const SafetensorsFile& file, const ImportOptions& options) {
  const Tensors tensors(file);
  const Family family = detect_family(tensors);
  SingleFileArchitecture out;
  out.text_layout = family.layout;
  out.family = family.sd2() ? "SD 2.x" : "SD 1.x";
  out.tokenizer_pad = family.sd2() ? "!" : "<|endoftext|>";
  std::optional<LdmConfig> yaml;
  if (!options.ldm_config.empty()) yaml = ldm_config_read(options.ldm_config);
  const LdmConfig* config = yaml ? &*yaml : nullptr;
  if (config != nullptr && !config->cond_stage_target.empty()) {
    const bool open = config->cond_stage_target.find("OpenCLIP") != std::string::npos;
    if (open != family.sd2()) {
      tensors.fail("--config " + config->origin + " names the text encoder " + config->cond_stage_target +
                   " but the file holds " + (family.sd2() ? "OpenCLIP (SD 2.x)" : "CLIP (SD 1.x)") + " tensors");
    }
  }

  // The prediction type decides SD 2.x's default size too (768-v vs 512 base).
  std::string prediction;
  std::string prediction_origin;
  const auto& metadata = file.metadata();
  if (!options.prediction_type.empty()) {
    prediction = parse_prediction_type(options.prediction_type, "--prediction-type");
  } else if (config != nullptr && config->parameterization) {
    prediction = parse_prediction_type(*config->parameterization, config->origin + " (parameterization)");
    prediction_origin = "--config";
  } else if (const auto it = metadata.find("modelspec.prediction_type"); it != metadata.end()) {
    prediction = parse_prediction_type(it->second, file.path() + " (metadata modelspec.prediction_type)");
  } else if (family.sd2()) {
    prediction = "v_prediction";
    prediction_origin = "guess";
  } else {
    prediction = "epsilon";
  }

  if (config == nullptr && read_websd_metadata(file, out)) {
    out.unused_text_layers = 0;
    if (family.sd2()) {
      const std::int64_t blocks = tensors.count(
          [&](std::int64_t i) { return kOpenClip + "transformer.resblocks." + at(i) + "attn.in_proj_weight"; });
      out.unused_text_layers = blocks - out.text_encoder.value("num_hidden_layers", std::int64_t{0});
    }
  } else {
    const std::int64_t vae_levels =
        tensors.count([&](std::int64_t level) { return kVae + "encoder.down." + at(level) + "block.0.conv1.weight"; });
    const std::int64_t vae_scale = std::int64_t{1} << std::max<std::int64_t>(0, vae_levels - 1);
    std::int64_t image = family.sd2() && prediction == "v_prediction" ? 768 : 512;
    bool size_guessed = false;
    if (config != nullptr && config->image_size) {
      image = *config->image_size * vae_scale;
    } else if (const auto height = modelspec_height(metadata)) {
      image = *height;
    } else {
      size_guessed = true;
    }
    if (prediction_origin == "guess") {
      out.notes.push_back(
          std::string("an SD 2.x checkpoint that does not say its prediction type: assuming "
                      "v_prediction") +
          (size_guessed ? " at 768x768 (the 768-v models, as diffusers does)" : " (as diffusers does)") +
          "; pass --prediction-type epsilon for a base model");
    }
    out.text_encoder = infer_text_encoder(tensors, family, config, out.unused_text_layers);
    out.unet = infer_unet(tensors, family, config, image / vae_scale, prediction == "v_prediction");
    out.vae = infer_vae(tensors, config, image);
    out.config_source = config != nullptr ? file.path() + " (tensor shapes and --config " + config->origin + ")"
                                          : file.path() + " (tensor shapes and SD defaults)";
  }

  bool family_defaults = false;
  if (!options.scheduler_config.empty()) {
    out.scheduler = json_read_file(options.scheduler_config);
    out.scheduler_origin = options.scheduler_config;
  } else if (out.scheduler.is_null()) {
    family_defaults = true;
    out.scheduler = family_scheduler(family);
    out.scheduler_origin = file.path() + " (websd's " + out.family + " scheduler defaults)";
    if (config != nullptr) {
      if (config->linear_start) out.scheduler["beta_start"] = *config->linear_start;
      if (config->linear_end) out.scheduler["beta_end"] = *config->linear_end;
      if (config->timesteps) out.scheduler["num_train_timesteps"] = *config->timesteps;
    }
  }
  if (!out.scheduler.is_object()) {
    throw Error("import", out.scheduler_origin + ": a scheduler config must be a JSON object");
  }
  // The model's own scheduler config (websd's metadata, --scheduler-config) says what it says, class
  // defaults included; the family's gets the prediction type found above; the option overrides both.
  if (!options.prediction_type.empty() || family_defaults) out.scheduler["prediction_type"] = prediction;
  if (options.use_ema && !tensors.has_prefix(kLdmEmaPrefix)) {
    tensors.fail("--use-ema: the file holds no EMA weights (model_ema.*)");
  }
  return out;
}

std::string websd_config_metadata_key(const std::string& component) {
  return std::string(kWebsdMetadataPrefix) + component + ".config";
}

std::string websd_tokenizer_metadata_key(const std::string& file) {
  return std::string(kWebsdMetadataPrefix) + "tokenizer." + file;
}

}  // namespace websd
