// The graphs declare exactly the parameters that the checkpoints hold: the same names and shapes as the
// parameter lists of src/models (which are proven against real checkpoints), for the fixture configs,
// the SD 1.5 / 2.1 presets and configurations of our own.
#include <gtest/gtest.h>

#include "graph_test_support.h"
#include "import/diffusers_checkpoint.h"
#include "io/json_file.h"
#include "models/graphs/sd_graphs.h"
#include "models/model_presets.h"

namespace websd {
namespace {

// A VAE's parameters are split between its two functions; together they are the whole list.
std::vector<ParamSpec> vae_graph_specs(const VaeConfig& config, std::int64_t latent_size) {
  std::vector<ParamSpec> specs = test::sorted_weight_specs(vae_decode_graph(config, 1, latent_size, latent_size));
  const std::int64_t scale = std::int64_t{1} << (config.block_count() - 1);
  for (auto& spec : test::sorted_weight_specs(vae_encode_graph(config, 1, latent_size * scale, latent_size * scale))) {
    specs.push_back(std::move(spec));
  }
  std::sort(specs.begin(), specs.end(), [](const ParamSpec& a, const ParamSpec& b) { return a.name < b.name; });
  return specs;
}

void expect_unet_weights_match(const UNetConfig& config, std::int64_t latent_size) {
  EXPECT_EQ(test::sorted_weight_specs(unet_graph(config, 2, latent_size, latent_size)),
            test::sorted_specs(unet_params(config)));
}

TEST(WeightList, TinyGraphsEqualTheParameterLists) {
  EXPECT_EQ(test::sorted_weight_specs(clip_text_graph(test::tiny_clip_config(), 2)),
            test::sorted_specs(clip_text_params(test::tiny_clip_config())));
  expect_unet_weights_match(test::tiny_unet_config(), 16);
  EXPECT_EQ(vae_graph_specs(test::tiny_vae_config(), 16), test::sorted_specs(vae_params(test::tiny_vae_config())));
}

TEST(WeightList, TinyGraphsBindToTheFixtureCheckpoint) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  EXPECT_NO_THROW(checkpoint.component("text_encoder")
                      .bind(test::sorted_weight_specs(clip_text_graph(test::tiny_clip_config(), 1))));
  EXPECT_NO_THROW(
      checkpoint.component("unet").bind(test::sorted_weight_specs(unet_graph(test::tiny_unet_config(), 1, 16, 24))));
  EXPECT_NO_THROW(checkpoint.component("vae").bind(vae_graph_specs(test::tiny_vae_config(), 16)));
}

TEST(WeightList, PresetGraphsEqualTheParameterLists) {
  for (const std::string name : {"sd15", "sd21"}) {
    SCOPED_TRACE(name);
    const ModelPreset& preset = model_preset(name);
    const ClipTextConfig clip = clip_config_from_json(json_parse(preset.text_encoder, name), name);
    EXPECT_EQ(test::sorted_weight_specs(clip_text_graph(clip, 2)), test::sorted_specs(clip_text_params(clip)));
    expect_unet_weights_match(unet_config_from_json(json_parse(preset.unet, name), name), 64);
    const VaeConfig vae = vae_config_from_json(json_parse(preset.vae, name), name);
    EXPECT_EQ(vae_graph_specs(vae, 8), test::sorted_specs(vae_params(vae)));
  }
}

TEST(WeightList, OwnConfigGraphsEqualTheParameterLists) {
  expect_unet_weights_match(test::sd2_style_unet_config(true), 8);
  expect_unet_weights_match(test::sd2_style_unet_config(false), 8);
  expect_unet_weights_match(test::two_block_unet_config(), 8);
  for (const VaeConfig& config : {test::three_level_vae_config(), test::plain_two_level_vae_config()}) {
    EXPECT_EQ(vae_graph_specs(config, 4), test::sorted_specs(vae_params(config)));
  }
}

}  // namespace
}  // namespace websd
