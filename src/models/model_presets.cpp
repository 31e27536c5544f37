#include "models/model_presets.h"

#include <map>

#include "core/error.h"

namespace websd {
namespace {

// websd writes no safety checker or feature extractor, so the pipeline files declare them absent
// ([null, null]) where the originals list them; every other key is as the original checkpoint has it.

ModelPreset sd15_preset() {
  return ModelPreset{
      .name = "sd15",
      .summary = "Stable Diffusion 1.5 (runwayml/stable-diffusion-v1-5): CLIP ViT-L/14, 512x512, epsilon",
      .model_index = R"({
  "_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.18.0.dev0",
  "feature_extractor": [null, null], "requires_safety_checker": false, "safety_checker": [null, null],
  "scheduler": ["diffusers", "PNDMScheduler"], "text_encoder": ["transformers", "CLIPTextModel"],
  "tokenizer": ["transformers", "CLIPTokenizer"], "unet": ["diffusers", "UNet2DConditionModel"],
  "vae": ["diffusers", "AutoencoderKL"]})",
      .scheduler = R"({
  "_class_name": "PNDMScheduler", "_diffusers_version": "0.17.0.dev0", "beta_end": 0.012,
  "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": false, "clip_sample_range": 1.0,
  "dynamic_thresholding_ratio": 0.995, "num_train_timesteps": 1000, "prediction_type": "epsilon",
  "sample_max_value": 1.0, "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1,
  "thresholding": false, "trained_betas": null})",
      .text_encoder = R"({
  "architectures": ["CLIPTextModel"], "attention_dropout": 0.0, "bos_token_id": 0, "dropout": 0.0,
  "eos_token_id": 2, "hidden_act": "quick_gelu", "hidden_size": 768, "initializer_factor": 1.0,
  "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05, "max_position_embeddings": 77,
  "model_type": "clip_text_model", "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1,
  "projection_dim": 768, "torch_dtype": "float32", "transformers_version": "4.37.2", "vocab_size": 49408})",
      .unet = R"({
  "_class_name": "UNet2DConditionModel", "_diffusers_version": "0.17.0.dev0", "act_fn": "silu",
  "addition_embed_type": null, "addition_embed_type_num_heads": 64, "attention_head_dim": 8,
  "block_out_channels": [320, 640, 1280, 1280], "center_input_sample": false, "class_embed_type": null,
  "class_embeddings_concat": false, "conv_in_kernel": 3, "conv_out_kernel": 3, "cross_attention_dim": 768,
  "cross_attention_norm": null,
  "down_block_types": ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
  "downsample_padding": 1, "dual_cross_attention": false, "encoder_hid_dim": null, "flip_sin_to_cos": true,
  "freq_shift": 0, "in_channels": 4, "layers_per_block": 2, "mid_block_only_cross_attention": null,
  "mid_block_scale_factor": 1, "mid_block_type": "UNetMidBlock2DCrossAttn", "norm_eps": 1e-05,
  "norm_num_groups": 32, "num_class_embeds": null, "only_cross_attention": false, "out_channels": 4,
  "projection_class_embeddings_input_dim": null, "resnet_out_scale_factor": 1.0, "resnet_skip_time_act": false,
  "resnet_time_scale_shift": "default", "sample_size": 64, "time_cond_proj_dim": null,
  "time_embedding_act_fn": null, "time_embedding_dim": null, "time_embedding_type": "positional",
  "timestep_post_act": null,
  "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"],
  "upcast_attention": null, "use_linear_projection": false})",
      .vae = R"({
  "_class_name": "AutoencoderKL", "_diffusers_version": "0.6.0", "act_fn": "silu",
  "block_out_channels": [128, 256, 512, 512],
  "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"],
  "in_channels": 3, "latent_channels": 4, "layers_per_block": 2, "norm_num_groups": 32, "out_channels": 3,
  "sample_size": 512, "scaling_factor": 0.18215,
  "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"]})",
      .tokenizer_pad = "<|endoftext|>"};
}

ModelPreset sd21_preset() {
  return ModelPreset{
      .name = "sd21",
      .summary =
          "Stable Diffusion 2.1 (stabilityai/stable-diffusion-2-1): OpenCLIP ViT-H text encoder, 768x768, v-prediction",
      .model_index = R"({
  "_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.8.0",
  "feature_extractor": [null, null], "requires_safety_checker": false, "safety_checker": [null, null],
  "scheduler": ["diffusers", "DDIMScheduler"], "text_encoder": ["transformers", "CLIPTextModel"],
  "tokenizer": ["transformers", "CLIPTokenizer"], "unet": ["diffusers", "UNet2DConditionModel"],
  "vae": ["diffusers", "AutoencoderKL"]})",
      .scheduler = R"({
  "_class_name": "DDIMScheduler", "_diffusers_version": "0.8.0", "beta_end": 0.012,
  "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": false, "num_train_timesteps": 1000,
  "prediction_type": "v_prediction", "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1,
  "trained_betas": null})",
      .text_encoder = R"({
  "_name_or_path": "hf-models/stable-diffusion-v2-768x768/text_encoder", "architectures": ["CLIPTextModel"],
  "attention_dropout": 0.0, "bos_token_id": 0, "dropout": 0.0, "eos_token_id": 2, "hidden_act": "gelu",
  "hidden_size": 1024, "initializer_factor": 1.0, "initializer_range": 0.02, "intermediate_size": 4096,
  "layer_norm_eps": 1e-05, "max_position_embeddings": 77, "model_type": "clip_text_model",
  "num_attention_heads": 16, "num_hidden_layers": 23, "pad_token_id": 1, "projection_dim": 512,
  "torch_dtype": "float32", "transformers_version": "4.25.0.dev0", "vocab_size": 49408})",
      .unet = R"({
  "_class_name": "UNet2DConditionModel", "_diffusers_version": "0.10.0.dev0", "act_fn": "silu",
  "attention_head_dim": [5, 10, 20, 20], "block_out_channels": [320, 640, 1280, 1280],
  "center_input_sample": false, "cross_attention_dim": 1024,
  "down_block_types": ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"],
  "downsample_padding": 1, "dual_cross_attention": false, "flip_sin_to_cos": true, "freq_shift": 0,
  "in_channels": 4, "layers_per_block": 2, "mid_block_scale_factor": 1, "norm_eps": 1e-05, "norm_num_groups": 32,
  "num_class_embeds": null, "only_cross_attention": false, "out_channels": 4, "sample_size": 96,
  "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"],
  "upcast_attention": true, "use_linear_projection": true})",
      .vae = R"({
  "_class_name": "AutoencoderKL", "_diffusers_version": "0.8.0",
  "_name_or_path": "hf-models/stable-diffusion-v2-768x768/vae", "act_fn": "silu",
  "block_out_channels": [128, 256, 512, 512],
  "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"],
  "in_channels": 3, "latent_channels": 4, "layers_per_block": 2, "norm_num_groups": 32, "out_channels": 3,
  "sample_size": 768,
  "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"]})",
      .tokenizer_pad = "!"};
}

// The architecture of ../shared/fixtures/tiny-sd15/model (its config.json files, key for key).
ModelPreset tiny_preset() {
  return ModelPreset{
      .name = "tiny",
      .summary = "The tiny SD 1.x test model of the shared fixtures: width-32 CLIP, 32/64/64 UNet, 128x128",
      .model_index = R"({
  "_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.40.0.dev0",
  "feature_extractor": [null, null], "image_encoder": [null, null], "requires_safety_checker": false,
  "safety_checker": [null, null], "scheduler": ["diffusers", "PNDMScheduler"],
  "text_encoder": ["transformers", "CLIPTextModel"], "tokenizer": ["transformers", "CLIPTokenizer"],
  "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"]})",
      .scheduler = R"({
  "_class_name": "PNDMScheduler", "_diffusers_version": "0.40.0.dev0", "beta_end": 0.012,
  "beta_schedule": "scaled_linear", "beta_start": 0.00085, "num_train_timesteps": 1000,
  "prediction_type": "epsilon", "set_alpha_to_one": false, "skip_prk_steps": true, "steps_offset": 1,
  "timestep_spacing": "leading", "trained_betas": null})",
      .text_encoder = R"({
  "architectures": ["CLIPTextModel"], "attention_dropout": 0.0, "bos_token_id": 49406, "dtype": "float16",
  "eos_token_id": 49407, "hidden_act": "quick_gelu", "hidden_size": 32, "initializer_factor": 1.0,
  "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-05, "max_position_embeddings": 77,
  "model_type": "clip_text_model", "num_attention_heads": 4, "num_hidden_layers": 2, "pad_token_id": 1,
  "projection_dim": 32, "transformers_version": "5.17.0", "vocab_size": 49408})",
      .unet = R"({
  "_class_name": "UNet2DConditionModel", "_diffusers_version": "0.40.0.dev0", "act_fn": "silu",
  "addition_embed_type": null, "addition_embed_type_num_heads": 64, "addition_time_embed_dim": null,
  "attention_head_dim": 8, "attention_type": "default", "block_out_channels": [32, 64, 64],
  "center_input_sample": false, "class_embed_type": null, "class_embeddings_concat": false, "conv_in_kernel": 3,
  "conv_out_kernel": 3, "cross_attention_dim": 32, "cross_attention_norm": null,
  "down_block_types": ["CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"], "downsample_padding": 1,
  "dropout": 0.0, "dual_cross_attention": false, "encoder_hid_dim": null, "encoder_hid_dim_type": null,
  "flip_sin_to_cos": true, "freq_shift": 0, "in_channels": 4, "layers_per_block": 2,
  "mid_block_only_cross_attention": null, "mid_block_scale_factor": 1, "mid_block_type": "UNetMidBlock2DCrossAttn",
  "norm_eps": 1e-05, "norm_num_groups": 32, "num_attention_heads": null, "num_class_embeds": null,
  "only_cross_attention": false, "out_channels": 4, "projection_class_embeddings_input_dim": null,
  "resnet_out_scale_factor": 1.0, "resnet_skip_time_act": false, "resnet_time_scale_shift": "default",
  "reverse_transformer_layers_per_block": null, "sample_size": 16, "time_cond_proj_dim": null,
  "time_embedding_act_fn": null, "time_embedding_dim": null, "time_embedding_type": "positional",
  "timestep_post_act": null, "transformer_layers_per_block": 1,
  "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"], "upcast_attention": false,
  "use_linear_projection": false})",
      .vae = R"({
  "_class_name": "AutoencoderKL", "_diffusers_version": "0.40.0.dev0", "act_fn": "silu",
  "block_out_channels": [32, 32, 64, 64],
  "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"],
  "force_upcast": true, "in_channels": 3, "latent_channels": 4, "latents_mean": null, "latents_std": null,
  "layers_per_block": 2, "mid_block_add_attention": true, "norm_num_groups": 32, "out_channels": 3,
  "sample_size": 128, "scaling_factor": 0.18215, "shift_factor": null,
  "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"],
  "use_post_quant_conv": true, "use_quant_conv": true})",
      .tokenizer_pad = "<|endoftext|>"};
}

const std::map<std::string, ModelPreset>& presets() {
  static const std::map<std::string, ModelPreset> all = {
      {"sd15", sd15_preset()}, {"sd21", sd21_preset()}, {"tiny", tiny_preset()}};
  return all;
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, preset] : presets()) names.push_back(name);
  return names;
}

const ModelPreset& model_preset(const std::string& name) {
  const auto it = presets().find(name);
  if (it == presets().end()) {
    std::string known;
    for (const auto& candidate : model_preset_names()) known += (known.empty() ? "" : ", ") + candidate;
    throw Error("models", "unknown model preset '" + name + "' (known presets: " + known + ")");
  }
  return it->second;
}

}  // namespace websd
