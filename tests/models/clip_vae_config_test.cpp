// Text encoder and VAE config.json parsing: the libraries' defaults, the fixture, and clear errors.
#include <gtest/gtest.h>

#include "core/error.h"
#include "models/clip_config.h"
#include "models/vae_config.h"
#include "support/fixtures.h"

namespace websd {
namespace {

using Json = nlohmann::json;

template <typename Parse>
std::string error_of(Parse parse, const Json& config) {
  try {
    parse(config, "cfg");
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(ClipConfig, ReadsTheTinyFixture) {
  const ClipTextConfig config = clip_config_read(test::fixture_path("tiny-sd15/model/text_encoder/config.json"));
  EXPECT_EQ(config.vocab_size, 49408);
  EXPECT_EQ(config.hidden_size, 32);
  EXPECT_EQ(config.intermediate_size, 64);
  EXPECT_EQ(config.num_hidden_layers, 2);
  EXPECT_EQ(config.num_attention_heads, 4);
  EXPECT_EQ(config.head_dim(), 8);
  EXPECT_EQ(config.max_position_embeddings, 77);
  EXPECT_EQ(config.hidden_act, ClipActivation::kQuickGelu);
  EXPECT_DOUBLE_EQ(config.layer_norm_eps, 1e-5);
  EXPECT_EQ(config.projection_dim, 32);
}

TEST(ClipConfig, EmptyObjectGivesTransformersDefaults) {
  const ClipTextConfig config = clip_config_from_json(Json::object(), "cfg");
  EXPECT_EQ(config, ClipTextConfig{});
  EXPECT_EQ(config.hidden_size, 512);
  EXPECT_EQ(config.num_hidden_layers, 12);
  EXPECT_EQ(config.num_attention_heads, 8);
}

TEST(ClipConfig, GeluIsSupported) {
  EXPECT_EQ(clip_config_from_json({{"hidden_act", "gelu"}}, "cfg").hidden_act, ClipActivation::kGelu);
}

// What transformers accepts for a CLIP text encoder: CLIPTextModelWithProjection's config (its
// projection head is not used), a whole CLIPConfig whose text_config is read, and both exact GELUs.
TEST(ClipConfig, AcceptsTheConfigFormsTransformersLoadsATextModelFrom) {
  EXPECT_EQ(clip_config_from_json({{"architectures", {"CLIPTextModelWithProjection"}}}, "cfg"), ClipTextConfig{});
  EXPECT_EQ(clip_config_from_json({{"architectures", nullptr}}, "cfg"), ClipTextConfig{});
  EXPECT_EQ(clip_config_from_json({{"hidden_act", "gelu_python"}}, "cfg").hidden_act, ClipActivation::kGelu);
  const ClipTextConfig nested = clip_config_from_json(
      {{"model_type", "clip"},
       {"architectures", {"CLIPModel"}},
       {"projection_dim", 768},
       {"logit_scale_init_value", 2.6592},
       {"text_config", {{"hidden_size", 64}, {"num_attention_heads", 2}, {"model_type", "clip_text_model"}}},
       {"vision_config", {{"hidden_size", 1024}}}},
      "cfg");
  EXPECT_EQ(nested.hidden_size, 64);
  EXPECT_EQ(nested.num_attention_heads, 2);
}

TEST(ClipConfig, UnsupportedValuesAreErrors) {
  EXPECT_EQ(error_of(clip_config_from_json, {{"hidden_act", "relu"}}),
            "[text_encoder] cfg: hidden_act=\"relu\" is not supported (supported: \"quick_gelu\" or \"gelu\" or "
            "\"gelu_python\")");
  EXPECT_NE(error_of(clip_config_from_json, {{"model_type", "clip"}}).find("model_type \"clip\" without a text_config"),
            std::string::npos);
  EXPECT_NE(error_of(clip_config_from_json, {{"model_type", "clip"}, {"text_config", {{"hidden_size", 0}}}})
                .find("cfg (text_config): hidden_size=0 is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(clip_config_from_json, {{"architectures", {"CLIPVisionModel"}}})
                .find("architectures=[\"CLIPVisionModel\"] is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(clip_config_from_json, {{"hidden_size", 30}}).find("not divisible by num_attention_heads=8"),
            std::string::npos);
  EXPECT_NE(error_of(clip_config_from_json, {{"layer_norm_eps", -1}}).find("layer_norm_eps=-1"), std::string::npos);
  EXPECT_NE(error_of(clip_config_from_json, {{"text_config", Json::object()}}).find("unknown key 'text_config'"),
            std::string::npos);
}

TEST(VaeConfig, ReadsTheTinyFixture) {
  const VaeConfig config = vae_config_read(test::fixture_path("tiny-sd15/model/vae/config.json"));
  EXPECT_EQ(config.block_out_channels, (std::vector<std::int64_t>{32, 32, 64, 64}));
  EXPECT_EQ(config.layers_per_block, 2);
  EXPECT_EQ(config.latent_channels, 4);
  EXPECT_EQ(config.in_channels, 3);
  EXPECT_EQ(config.out_channels, 3);
  EXPECT_EQ(config.sample_size, 128);
  EXPECT_DOUBLE_EQ(config.scaling_factor, 0.18215);
  EXPECT_TRUE(config.mid_block_add_attention);
  EXPECT_TRUE(config.use_quant_conv);
  EXPECT_TRUE(config.use_post_quant_conv);
  EXPECT_TRUE(config.force_upcast);
}

TEST(VaeConfig, EmptyObjectGivesDiffusersDefaults) {
  EXPECT_EQ(vae_config_from_json(Json::object(), "cfg"), VaeConfig{});
  const VaeConfig config = vae_config_from_json(
      {{"use_quant_conv", false}, {"mid_block_add_attention", false}, {"scaling_factor", 0.13025}}, "cfg");
  EXPECT_FALSE(config.use_quant_conv);
  EXPECT_FALSE(config.mid_block_add_attention);
  EXPECT_DOUBLE_EQ(config.scaling_factor, 0.13025);
}

// AutoencoderKL reads sample_size as an int or a pair (its first entry) and "swish" as SiLU.
TEST(VaeConfig, AcceptsPairSampleSizesAndTheSwishAlias) {
  const VaeConfig config = vae_config_from_json({{"sample_size", {512, 768}}, {"act_fn", "swish"}}, "cfg");
  EXPECT_EQ(config.sample_size, 512);
  EXPECT_NE(error_of(vae_config_from_json, {{"sample_size", {512, 0}}}).find("sample_size=[512,0] is not supported"),
            std::string::npos);
}

TEST(VaeConfig, UnsupportedValuesAreErrors) {
  EXPECT_EQ(error_of(vae_config_from_json, {{"shift_factor", 0.1159}}),
            "[vae] cfg: shift_factor=0.1159 is not supported (supported: null)");
  EXPECT_NE(error_of(vae_config_from_json, {{"act_fn", "relu"}}).find("act_fn=\"relu\" is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(vae_config_from_json, {{"down_block_types", {"DownBlock2D"}}}).find("block type 'DownBlock2D'"),
            std::string::npos);
  EXPECT_NE(error_of(vae_config_from_json, {{"latents_mean", {0.1, 0.2, 0.3, 0.4}}}).find("latents_mean="),
            std::string::npos);
  EXPECT_NE(error_of(vae_config_from_json, {{"block_out_channels", {128, 256}}}).find("must have the same length"),
            std::string::npos);
  EXPECT_NE(error_of(vae_config_from_json, {{"norm_num_groups", 48}}).find("not divisible by norm_num_groups=48"),
            std::string::npos);
  EXPECT_NE(error_of(vae_config_from_json, {{"temb_channels", 512}}).find("unknown key 'temb_channels'"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
