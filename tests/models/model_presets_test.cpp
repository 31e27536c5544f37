// The presets describe the real checkpoints: tiny is the fixture's architecture key for key, sd15 and
// sd21 carry the SD 1.5 / 2.1 settings that change the computation.
#include "models/model_presets.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "io/json_file.h"
#include "models/clip_config.h"
#include "models/unet_config.h"
#include "models/vae_config.h"
#include "support/fixtures.h"

namespace websd {
namespace {

nlohmann::json fixture_json(const std::string& relative) {
  return json_read_file(test::fixture_path("tiny-sd15/model/" + relative));
}

TEST(ModelPresets, NamesAndUnknownName) {
  EXPECT_EQ(model_preset_names(), (std::vector<std::string>{"sd15", "sd21", "tiny"}));
  try {
    model_preset("sd3");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "[models] unknown model preset 'sd3' (known presets: sd15, sd21, tiny)");
  }
}

TEST(ModelPresets, TinyIsTheFixtureArchitectureKeyForKey) {
  const ModelPreset& tiny = model_preset("tiny");
  EXPECT_EQ(json_parse(tiny.text_encoder, "tiny"), fixture_json("text_encoder/config.json"));
  EXPECT_EQ(json_parse(tiny.unet, "tiny"), fixture_json("unet/config.json"));
  EXPECT_EQ(json_parse(tiny.vae, "tiny"), fixture_json("vae/config.json"));
  EXPECT_EQ(json_parse(tiny.scheduler, "tiny"), fixture_json("scheduler/scheduler_config.json"));
  EXPECT_EQ(json_parse(tiny.model_index, "tiny"), fixture_json("model_index.json"));
  EXPECT_EQ(tiny.tokenizer_pad, "<|endoftext|>");
}

TEST(ModelPresets, Sd15IsEpsilonPredictionWithPndm) {
  const ModelPreset& sd15 = model_preset("sd15");
  const auto scheduler = json_parse(sd15.scheduler, "sd15");
  EXPECT_EQ(scheduler["_class_name"], "PNDMScheduler");
  EXPECT_EQ(scheduler["prediction_type"], "epsilon");
  EXPECT_EQ(scheduler["steps_offset"], 1);
  const UNetConfig unet = unet_config_from_json(json_parse(sd15.unet, "sd15"), "sd15");
  EXPECT_EQ(unet.sample_size, (std::pair<std::int64_t, std::int64_t>{64, 64}));
  EXPECT_EQ(unet.cross_attention_dim, 768);
  EXPECT_EQ(unet.attention_heads, (std::vector<std::int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(unet.head_dim(0), 40);
  EXPECT_FALSE(unet.use_linear_projection);
  EXPECT_FALSE(unet.upcast_attention);
  const ClipTextConfig clip = clip_config_from_json(json_parse(sd15.text_encoder, "sd15"), "sd15");
  EXPECT_EQ(clip.hidden_size, 768);
  EXPECT_EQ(clip.hidden_act, ClipActivation::kQuickGelu);
  EXPECT_EQ(vae_config_from_json(json_parse(sd15.vae, "sd15"), "sd15").sample_size, 512);
  EXPECT_EQ(sd15.tokenizer_pad, "<|endoftext|>");
}

TEST(ModelPresets, Sd21IsVPredictionWithLinearProjectionsAndOpenClip) {
  const ModelPreset& sd21 = model_preset("sd21");
  const auto scheduler = json_parse(sd21.scheduler, "sd21");
  EXPECT_EQ(scheduler["_class_name"], "DDIMScheduler");
  EXPECT_EQ(scheduler["prediction_type"], "v_prediction");
  EXPECT_EQ(json_parse(sd21.model_index, "sd21")["scheduler"][1], "DDIMScheduler");
  const UNetConfig unet = unet_config_from_json(json_parse(sd21.unet, "sd21"), "sd21");
  EXPECT_EQ(unet.sample_size, (std::pair<std::int64_t, std::int64_t>{96, 96}));
  EXPECT_EQ(unet.cross_attention_dim, 1024);
  EXPECT_EQ(unet.attention_heads, (std::vector<std::int64_t>{5, 10, 20, 20}));
  EXPECT_EQ(unet.head_dim(3), 64);
  EXPECT_TRUE(unet.use_linear_projection);
  EXPECT_TRUE(unet.upcast_attention);
  const ClipTextConfig clip = clip_config_from_json(json_parse(sd21.text_encoder, "sd21"), "sd21");
  EXPECT_EQ(clip.hidden_size, 1024);
  EXPECT_EQ(clip.num_hidden_layers, 23);
  EXPECT_EQ(clip.num_attention_heads, 16);
  EXPECT_EQ(clip.intermediate_size, 4096);
  EXPECT_EQ(clip.hidden_act, ClipActivation::kGelu);
  EXPECT_EQ(vae_config_from_json(json_parse(sd21.vae, "sd21"), "sd21").sample_size, 768);
  EXPECT_EQ(sd21.tokenizer_pad, "!");
}

TEST(ModelPresets, PipelineFilesDeclareNoSafetyChecker) {
  for (const auto& name : model_preset_names()) {
    const auto index = json_parse(model_preset(name).model_index, name);
    EXPECT_EQ(index["safety_checker"], nlohmann::json::array({nullptr, nullptr})) << name;
    EXPECT_EQ(index["feature_extractor"], nlohmann::json::array({nullptr, nullptr})) << name;
    EXPECT_EQ(index["requires_safety_checker"], false) << name;
  }
}

}  // namespace
}  // namespace websd
