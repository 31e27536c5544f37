// Configurations as public SD 1.x/2.x checkpoints and diffusers' own pipeline tests write them, each
// built with random weights and run end to end (one guided step, then the VAE) at a tiny size, then
// written as a single file and read back into bit-identical latents. Widths of the public checkpoints
// are reduced (noted per case); every key, and the form of every value, is as the original file has it.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/checkpoint_backend.h"
#include "import/checkpoint_tokenizer.h"
#include "import/single_file_writer.h"
#include "io/json_file.h"
#include "models/model_presets.h"
#include "models/random_checkpoint.h"
#include "pipeline/pipeline.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd {
namespace {

using Json = nlohmann::json;

const Json kDown4 = {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"};
const Json kUp4 = {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"};
const Json kVaeDown4 = {"DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"};
const Json kVaeUp4 = {"UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"};

struct FormsCase {
  std::string name;
  Json text_encoder, unet, vae, scheduler;
  std::int64_t width = 0, height = 0;  // the default image the model makes
};

// openai/clip-vit-large-patch14 as SD 1.x checkpoints ship it (width 768 -> 32, 12 layers -> 2).
Json sd1_text_encoder() {
  return {{"_name_or_path", "openai/clip-vit-large-patch14"},
          {"architectures", {"CLIPTextModel"}},
          {"attention_dropout", 0.0},
          {"bos_token_id", 0},
          {"dropout", 0.0},
          {"eos_token_id", 2},
          {"hidden_act", "quick_gelu"},
          {"hidden_size", 32},
          {"initializer_factor", 1.0},
          {"initializer_range", 0.02},
          {"intermediate_size", 64},
          {"layer_norm_eps", 1e-05},
          {"max_position_embeddings", 77},
          {"model_type", "clip_text_model"},
          {"num_attention_heads", 4},
          {"num_hidden_layers", 2},
          {"pad_token_id", 1},
          {"projection_dim", 768},
          {"torch_dtype", "float32"},
          {"transformers_version", "4.22.0.dev0"},
          {"vocab_size", 49408}};
}

// runwayml/stable-diffusion-v1-5 as diffusers 0.6.0 saved it (few keys: the rest are defaults).
FormsCase sd15_v060() {
  return {"sd15_diffusers_0_6",
          sd1_text_encoder(),
          {{"_class_name", "UNet2DConditionModel"},
           {"_diffusers_version", "0.6.0"},
           {"act_fn", "silu"},
           {"attention_head_dim", 8},
           {"block_out_channels", {32, 64, 64, 64}},
           {"center_input_sample", false},
           {"cross_attention_dim", 32},
           {"down_block_types", kDown4},
           {"downsample_padding", 1},
           {"flip_sin_to_cos", true},
           {"freq_shift", 0},
           {"in_channels", 4},
           {"layers_per_block", 2},
           {"mid_block_scale_factor", 1},
           {"norm_eps", 1e-05},
           {"norm_num_groups", 32},
           {"out_channels", 4},
           {"sample_size", 8},
           {"up_block_types", kUp4}},
          {{"_class_name", "AutoencoderKL"},
           {"_diffusers_version", "0.6.0"},
           {"act_fn", "silu"},
           {"block_out_channels", {32, 32, 64, 64}},
           {"down_block_types", kVaeDown4},
           {"in_channels", 3},
           {"latent_channels", 4},
           {"layers_per_block", 2},
           {"norm_num_groups", 32},
           {"out_channels", 3},
           {"sample_size", 64},
           {"up_block_types", kVaeUp4}},
          json_parse(model_preset("sd15").scheduler, "sd15"),
          64,
          64};
}

// stabilityai/stable-diffusion-2-1 (heads per block [5,10,20,20] of width 64 -> [1,2,2,2]).
FormsCase sd21() {
  Json text = sd1_text_encoder();
  text.update(Json{{"_name_or_path", "hf-models/stable-diffusion-v2-768x768/text_encoder"},
                   {"hidden_act", "gelu"},
                   {"hidden_size", 64},
                   {"intermediate_size", 128},
                   {"num_attention_heads", 1},
                   {"projection_dim", 512},
                   {"transformers_version", "4.25.0.dev0"}});
  return {"sd21",
          text,
          {{"_class_name", "UNet2DConditionModel"},
           {"_diffusers_version", "0.10.0.dev0"},
           {"act_fn", "silu"},
           {"attention_head_dim", {1, 2, 2, 2}},
           {"block_out_channels", {64, 128, 128, 128}},
           {"center_input_sample", false},
           {"class_embed_type", nullptr},
           {"cross_attention_dim", 64},
           {"down_block_types", kDown4},
           {"downsample_padding", 1},
           {"dual_cross_attention", false},
           {"flip_sin_to_cos", true},
           {"freq_shift", 0},
           {"in_channels", 4},
           {"layers_per_block", 2},
           {"mid_block_scale_factor", 1},
           {"norm_eps", 1e-05},
           {"norm_num_groups", 32},
           {"num_class_embeds", nullptr},
           {"only_cross_attention", false},
           {"out_channels", 4},
           {"resnet_time_scale_shift", "default"},
           {"sample_size", 8},
           {"up_block_types", kUp4},
           {"upcast_attention", true},
           {"use_linear_projection", true}},
          {{"_class_name", "AutoencoderKL"},
           {"_diffusers_version", "0.10.0.dev0"},
           {"act_fn", "silu"},
           {"block_out_channels", {32, 32, 64, 64}},
           {"down_block_types", kVaeDown4},
           {"in_channels", 3},
           {"latent_channels", 4},
           {"layers_per_block", 2},
           {"norm_num_groups", 32},
           {"out_channels", 3},
           {"sample_size", 64},
           {"up_block_types", kVaeUp4}},
          json_parse(model_preset("sd21").scheduler, "sd21"),
          64,
          64};
}

// diffusers' tests/pipelines/stable_diffusion/test_stable_diffusion.py get_dummy_components (as
// save_pretrained writes the constructor's arguments).
FormsCase diffusers_sd_test() {
  return {"diffusers_sd_test",
          {{"bos_token_id", 0},
           {"eos_token_id", 2},
           {"hidden_size", 32},
           {"intermediate_size", 37},
           {"layer_norm_eps", 1e-05},
           {"num_attention_heads", 4},
           {"num_hidden_layers", 5},
           {"pad_token_id", 1},
           {"vocab_size", 1000},
           {"model_type", "clip_text_model"}},
          {{"_class_name", "UNet2DConditionModel"},
           {"block_out_channels", {4, 8}},
           {"layers_per_block", 1},
           {"sample_size", 32},
           {"time_cond_proj_dim", nullptr},
           {"in_channels", 4},
           {"out_channels", 4},
           {"down_block_types", {"DownBlock2D", "CrossAttnDownBlock2D"}},
           {"up_block_types", {"CrossAttnUpBlock2D", "UpBlock2D"}},
           {"cross_attention_dim", 32},
           {"norm_num_groups", 2}},
          {{"_class_name", "AutoencoderKL"},
           {"block_out_channels", {4, 8}},
           {"in_channels", 3},
           {"out_channels", 3},
           {"down_block_types", {"DownEncoderBlock2D", "DownEncoderBlock2D"}},
           {"up_block_types", {"UpDecoderBlock2D", "UpDecoderBlock2D"}},
           {"latent_channels", 4},
           {"norm_num_groups", 2}},
          {{"_class_name", "DDIMScheduler"},
           {"beta_start", 0.00085},
           {"beta_end", 0.012},
           {"beta_schedule", "scaled_linear"},
           {"clip_sample", false},
           {"set_alpha_to_one", false}},
          64,
          64};
}

// diffusers' tests/pipelines/stable_diffusion_2/test_stable_diffusion.py get_dummy_components.
FormsCase diffusers_sd2_test() {
  return {"diffusers_sd2_test",
          {{"bos_token_id", 0},
           {"eos_token_id", 2},
           {"hidden_size", 32},
           {"intermediate_size", 37},
           {"layer_norm_eps", 1e-05},
           {"num_attention_heads", 4},
           {"num_hidden_layers", 5},
           {"pad_token_id", 1},
           {"vocab_size", 1000},
           {"hidden_act", "gelu"},
           {"projection_dim", 512}},
          {{"_class_name", "UNet2DConditionModel"},
           {"block_out_channels", {32, 64}},
           {"layers_per_block", 2},
           {"sample_size", 32},
           {"in_channels", 4},
           {"out_channels", 4},
           {"down_block_types", {"DownBlock2D", "CrossAttnDownBlock2D"}},
           {"up_block_types", {"CrossAttnUpBlock2D", "UpBlock2D"}},
           {"cross_attention_dim", 32},
           {"attention_head_dim", {2, 4}},
           {"use_linear_projection", true}},
          {{"_class_name", "AutoencoderKL"},
           {"block_out_channels", {32, 64}},
           {"in_channels", 3},
           {"out_channels", 3},
           {"down_block_types", {"DownEncoderBlock2D", "DownEncoderBlock2D"}},
           {"up_block_types", {"UpDecoderBlock2D", "UpDecoderBlock2D"}},
           {"latent_channels", 4},
           {"sample_size", 128}},
          {{"_class_name", "DDIMScheduler"},
           {"beta_start", 0.00085},
           {"beta_end", 0.012},
           {"beta_schedule", "scaled_linear"},
           {"clip_sample", false},
           {"set_alpha_to_one", false}},
          64,
          64};
}

// The fixture with a non-square training size: a (height, width) pair in both configs.
FormsCase non_square() {
  const ModelPreset& tiny = model_preset("tiny");
  Json unet = json_parse(tiny.unet, "tiny");
  unet["sample_size"] = {8, 12};
  Json vae = json_parse(tiny.vae, "tiny");
  vae["sample_size"] = {64, 96};
  return {"non_square", json_parse(tiny.text_encoder, "tiny"), unet, vae, json_parse(tiny.scheduler, "tiny"), 96, 64};
}

// Every other value form UNet2DConditionModel's signature allows and websd runs: per-block lists,
// per-layer transformer depths with their reverse list, a per-block context width that agrees,
// integers written as floats, the swish alias, odd kernels, the asymmetric downsample padding and a
// single-resnet mid block.
FormsCase every_form() {
  const ModelPreset& tiny = model_preset("tiny");
  return {"every_form",
          json_parse(tiny.text_encoder, "tiny"),
          {{"_class_name", "UNet2DConditionModel"},
           {"sample_size", 8.0},
           {"block_out_channels", {32.0, 64}},
           {"down_block_types", {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D"}},
           {"up_block_types", {"CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}},
           {"layers_per_block", {1, 2}},
           {"transformer_layers_per_block", {{1}, {2, 1}}},
           {"reverse_transformer_layers_per_block", {{1, 2, 1}, {2, 1}}},
           {"attention_head_dim", {4, 8}},
           {"cross_attention_dim", {32, 32}},
           {"only_cross_attention", {false, false}},
           {"act_fn", "swish"},
           {"conv_in_kernel", 5},
           {"conv_out_kernel", 1},
           {"downsample_padding", 0},
           {"mid_block_type", "UNetMidBlock2D"},
           {"time_embedding_dim", 64},
           {"flip_sin_to_cos", false},
           {"freq_shift", 1}},
          json_parse(tiny.vae, "tiny"),
          json_parse(tiny.scheduler, "tiny"),
          64,
          64};
}

FormsCase no_mid_block() {
  FormsCase forms = every_form();
  forms.name = "no_mid_block";
  forms.unet["mid_block_type"] = nullptr;
  forms.unet["attention_head_dim"] = 8;
  return forms;
}

void PrintTo(const FormsCase& forms, std::ostream* out) { *out << forms.name; }

std::string write_model(const FormsCase& forms) {
  ModelPreset preset = model_preset("tiny");
  preset.name = forms.name;
  Json index = json_parse(preset.model_index, "tiny");
  index["scheduler"] = {"diffusers", forms.scheduler.value("_class_name", std::string("PNDMScheduler"))};
  preset.model_index = index.dump();
  preset.text_encoder = forms.text_encoder.dump();
  preset.unet = forms.unet.dump();
  preset.vae = forms.vae.dump();
  preset.scheduler = forms.scheduler.dump();
  RandomCheckpointOptions options;
  options.out_dir = test::make_temp_dir("forms-" + forms.name) + "/model";
  options.seed = 11;
  random_checkpoint_write(preset, options, [](const std::string&) {});
  return options.out_dir;
}

GeneratedImage generate_once(const std::string& path) {
  auto checkpoint = std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(path));
  backends::CheckpointBackend backend(checkpoint);
  const ClipTokenizer tokenizer = checkpoint_tokenizer(*checkpoint);
  const auto scheduler =
      schedulers::create_scheduler(checkpoint->scheduler_config(), "euler", checkpoint->scheduler_config_origin());
  GenerationRequest request;
  request.params.prompt = "a lighthouse";
  request.params.steps = 1;
  request.params.seed = 5;
  request = validate_request(request, backend.info(), *scheduler);
  GeneratedImage result;
  Pipeline(backend, tokenizer).generate(request, *scheduler, [&](const GeneratedImage& image) { result = image; });
  return result;
}

class ConfigForms : public ::testing::TestWithParam<FormsCase> {};

TEST_P(ConfigForms, RunEndToEndAndSurviveTheSingleFileRoundTrip) {
  const FormsCase& forms = GetParam();
  const std::string folder = write_model(forms);
  const GeneratedImage image = generate_once(folder);
  EXPECT_EQ(image.image.width, forms.width);
  EXPECT_EQ(image.image.height, forms.height);
  for (const float value : image.latents.data) ASSERT_TRUE(std::isfinite(value));
  const std::string file = test::make_temp_dir("forms-file-" + forms.name) + "/model.safetensors";
  single_file_write(DiffusersCheckpoint::open(folder), file);
  EXPECT_TRUE(generate_once(file).latents.data == image.latents.data);
}

INSTANTIATE_TEST_SUITE_P(PublicAndDiffusersTestConfigs, ConfigForms,
                         ::testing::Values(sd15_v060(), sd21(), diffusers_sd_test(), diffusers_sd2_test(), non_square(),
                                           every_form(), no_mid_block()),
                         [](const ::testing::TestParamInfo<FormsCase>& info) { return info.param.name; });

// What the SD families hold that websd does not run is refused naming the key, value or kind.
TEST(ConfigForms, UnsupportedVariantsOfTheFamiliesAreRefusedByName) {
  FormsCase inpainting = sd21();  // stabilityai/stable-diffusion-2-inpainting
  inpainting.name = "inpainting";
  inpainting.unet["in_channels"] = 9;
  const std::string inpainting_dir = write_model(inpainting);
  EXPECT_NE(
      test::error_of([&] { backends::CheckpointBackend backend(inpainting_dir); }).find("an inpainting UNet (in_channels 9"),
      std::string::npos);
  FormsCase lcm = sd15_v060();  // SimianLuo/LCM_Dreamshaper_v7
  lcm.name = "lcm";
  lcm.unet["time_cond_proj_dim"] = 256;
  EXPECT_NE(test::error_of([&] { write_model(lcm); }).find("time_cond_proj_dim=256 is not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
