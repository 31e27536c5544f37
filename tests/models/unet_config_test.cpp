// UNet config.json parsing: diffusers' defaults, the head-count quirk, per-block lists, and a clear
// error for every value websd does not support.
#include "models/unet_config.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/fixtures.h"

namespace websd {
namespace {

using Json = nlohmann::json;

std::string error_of(const Json& config) {
  try {
    unet_config_from_json(config, "cfg");
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(UNetConfig, ReadsTheTinyFixture) {
  const UNetConfig config = unet_config_read(test::fixture_path("tiny-sd15/model/unet/config.json"));
  EXPECT_EQ(config.sample_size, (std::pair<std::int64_t, std::int64_t>{16, 16}));
  EXPECT_EQ(config.block_out_channels, (std::vector<std::int64_t>{32, 64, 64}));
  EXPECT_EQ(config.down_block_types,
            (std::vector<UNetBlockType>{UNetBlockType::kCrossAttn, UNetBlockType::kCrossAttn, UNetBlockType::kPlain}));
  EXPECT_EQ(config.up_block_types,
            (std::vector<UNetBlockType>{UNetBlockType::kPlain, UNetBlockType::kCrossAttn, UNetBlockType::kCrossAttn}));
  EXPECT_EQ(config.layers_per_block, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(config.down_transformer_layers, (std::vector<std::vector<std::int64_t>>{{1, 1}, {1, 1}, {1, 1}}));
  EXPECT_EQ(config.up_transformer_layers, (std::vector<std::vector<std::int64_t>>{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}));
  EXPECT_EQ(config.mid_block_type, UNetMidBlockType::kCrossAttn);
  // "attention_head_dim": 8 is the number of heads (8 heads of width 4 and 8).
  EXPECT_EQ(config.attention_heads, (std::vector<std::int64_t>{8, 8, 8}));
  EXPECT_EQ(config.head_dim(0), 4);
  EXPECT_EQ(config.head_dim(2), 8);
  EXPECT_EQ(config.cross_attention_dim, 32);
  EXPECT_EQ(config.time_embed_dim, 128);
  EXPECT_FALSE(config.use_linear_projection);
  EXPECT_FALSE(config.upcast_attention);
  EXPECT_TRUE(config.flip_sin_to_cos);
  EXPECT_EQ(config.freq_shift, 0);
  EXPECT_EQ(config.norm_num_groups, 32);
  EXPECT_DOUBLE_EQ(config.norm_eps, 1e-5);
}

TEST(UNetConfig, EmptyObjectGivesDiffusersDefaults) {
  const UNetConfig config = unet_config_from_json(Json::object(), "cfg");
  EXPECT_FALSE(config.sample_size.has_value());
  EXPECT_EQ(config.in_channels, 4);
  EXPECT_EQ(config.out_channels, 4);
  EXPECT_EQ(config.block_out_channels, (std::vector<std::int64_t>{320, 640, 1280, 1280}));
  EXPECT_EQ(config.down_block_types.back(), UNetBlockType::kPlain);
  EXPECT_EQ(config.up_block_types.front(), UNetBlockType::kPlain);
  EXPECT_EQ(config.attention_heads, (std::vector<std::int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(config.layers_per_block, (std::vector<std::int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(config.cross_attention_dim, 1280);
  EXPECT_EQ(config.time_embed_dim, 1280);
}

TEST(UNetConfig, PerBlockHeadCountsGiveSd2HeadWidth64) {
  const UNetConfig config = unet_config_from_json(
      {{"attention_head_dim", {5, 10, 20, 20}}, {"use_linear_projection", true}, {"upcast_attention", true}}, "cfg");
  EXPECT_EQ(config.attention_heads, (std::vector<std::int64_t>{5, 10, 20, 20}));
  for (std::size_t block = 0; block < 4; ++block) EXPECT_EQ(config.head_dim(block), 64) << block;
  EXPECT_TRUE(config.use_linear_projection);
  EXPECT_TRUE(config.upcast_attention);
}

TEST(UNetConfig, NullFlagsReadAsFalseAndPerBlockListsAreAccepted) {
  const UNetConfig config = unet_config_from_json({{"upcast_attention", nullptr},
                                                   {"layers_per_block", {1, 2, 3, 1}},
                                                   {"transformer_layers_per_block", {1, 2, 2, 1}},
                                                   {"only_cross_attention", {false, false, false, false}},
                                                   {"time_embedding_dim", 512}},
                                                  "cfg");
  EXPECT_FALSE(config.upcast_attention);
  EXPECT_EQ(config.layers_per_block, (std::vector<std::int64_t>{1, 2, 3, 1}));
  EXPECT_EQ(config.down_transformer_layers, (std::vector<std::vector<std::int64_t>>{{1}, {2, 2}, {2, 2, 2}, {1}}));
  // Up block i mirrors down block 3 - i, with one layer more; the mid block takes the last entry.
  EXPECT_EQ(config.up_transformer_layers,
            (std::vector<std::vector<std::int64_t>>{{1, 1}, {2, 2, 2, 2}, {2, 2, 2}, {1, 1}}));
  EXPECT_EQ(config.mid_transformer_layers, 1);
  EXPECT_EQ(config.time_embed_dim, 512);
}

// Value forms of UNet2DConditionModel's signature beyond the plain int/bool: (height, width) pairs,
// per-layer transformer depths with their reverse list, per-block context widths that agree, and
// the other mid blocks and kernels that get_mid_block / nn.Conv2d build.
TEST(UNetConfig, AcceptsEveryValueFormOfTheDiffusersSignature) {
  const UNetConfig config =
      unet_config_from_json({{"sample_size", {64, 96}},
                             {"layers_per_block", 1},
                             {"transformer_layers_per_block", {{1}, {2}, {3, 9}, 4}},
                             {"reverse_transformer_layers_per_block", {4, {3, 3}, {2, 1}, {1, 1}}},
                             {"cross_attention_dim", {768, 768, 768, 768}},
                             {"only_cross_attention", {false, false, false, false}},
                             {"act_fn", "swish"},
                             {"conv_in_kernel", 1},
                             {"conv_out_kernel", 5},
                             {"downsample_padding", 0},
                             {"block_out_channels", {320.0, 640, 1280, 1280}},
                             {"mid_block_type", nullptr}},
                            "cfg");
  EXPECT_EQ(config.sample_size, (std::pair<std::int64_t, std::int64_t>{64, 96}));
  EXPECT_EQ(config.down_transformer_layers, (std::vector<std::vector<std::int64_t>>{{1}, {2}, {3}, {4}}));
  EXPECT_EQ(config.up_transformer_layers, (std::vector<std::vector<std::int64_t>>{{4, 4}, {3, 3}, {2, 1}, {1, 1}}));
  EXPECT_EQ(config.mid_transformer_layers, 4);
  EXPECT_EQ(config.cross_attention_dim, 768);
  EXPECT_EQ(config.conv_in_kernel, 1);
  EXPECT_EQ(config.conv_out_kernel, 5);
  EXPECT_EQ(config.downsample_padding, 0);
  EXPECT_EQ(config.block_out_channels[0], 320);
  EXPECT_EQ(config.mid_block_type, UNetMidBlockType::kNone);
  EXPECT_EQ(unet_config_from_json({{"mid_block_type", "UNetMidBlock2D"}}, "cfg").mid_block_type,
            UNetMidBlockType::kResnetOnly);
  EXPECT_EQ(unet_config_from_json({{"sample_size", 96.0}}, "cfg").sample_size,
            (std::pair<std::int64_t, std::int64_t>{96, 96}));
}

TEST(UNetConfig, UnsupportedValuesNameComponentKeyAndValue) {
  EXPECT_EQ(error_of({{"only_cross_attention", true}}),
            "[unet] cfg: only_cross_attention=true is not supported (supported: false, or false for every block)");
  const std::vector<std::pair<std::string, Json>> cases = {
      {"only_cross_attention", {false, true, false, false}},
      {"dual_cross_attention", true},
      {"class_embed_type", "timestep"},
      {"num_class_embeds", 10},
      {"addition_embed_type", "text_time"},
      {"encoder_hid_dim", 768},
      {"time_cond_proj_dim", 256},
      {"time_embedding_type", "fourier"},
      {"resnet_time_scale_shift", "scale_shift"},
      {"act_fn", "gelu"},
      {"mid_block_type", "UNetMidBlock2DSimpleCrossAttn"},
      {"num_attention_heads", 8},
      {"conv_in_kernel", 2},
      {"conv_out_kernel", 4},
      {"downsample_padding", 2},
      {"sample_size", {64, 96, 1}},
      {"sample_size", "64"},
      {"mid_block_scale_factor", 2},
      {"resnet_out_scale_factor", 0.5},
      {"timestep_post_act", "silu"},
      {"time_embedding_act_fn", "gelu"},
      {"center_input_sample", true},
      {"attention_type", "gated"},
      {"reverse_transformer_layers_per_block", {{1}, {1}, {1}, {1}}},
      {"transformer_layers_per_block", {{1, 1}, 1, 1, 1}},
      {"cross_attention_dim", {768, 1024, 768, 768}},
      {"only_cross_attention", nullptr},
      {"down_block_types", {"AttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"}},
      {"up_block_types", {"UpBlock2D", "AttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}},
      {"_class_name", "UNet2DModel"},
      {"norm_num_groups", nullptr},
      {"in_channels", 0},
      {"norm_eps", "small"},
  };
  for (const auto& [key, value] : cases) {
    const std::string message = error_of({{key, value}});
    EXPECT_EQ(message.rfind("[unet] cfg: " + key + "=" + value.dump() + " is not supported", 0), 0u) << message;
  }
}

TEST(UNetConfig, ListLengthsMustMatchTheBlockCount) {
  EXPECT_NE(error_of({{"attention_head_dim", {5, 10, 20}}})
                .find("attention_head_dim=[5,10,20] is not supported "
                      "(expected one value per block: 4 values, got 3)"),
            std::string::npos);
  EXPECT_NE(error_of({{"layers_per_block", {2, 2}}}).find("layers_per_block="), std::string::npos);
  EXPECT_NE(error_of({{"block_out_channels", {320, 640, 1280}}}).find("must have the same length"), std::string::npos);
  EXPECT_NE(error_of({{"down_block_types", {"CrossAttnDownBlock2D", "DownBlock2D"}}}).find("must have the same length"),
            std::string::npos);
}

TEST(UNetConfig, ChannelsMustSplitIntoHeadsAndGroups) {
  EXPECT_NE(error_of({{"attention_head_dim", 7}}).find("not divisible by its 7 attention heads"), std::string::npos);
  EXPECT_NE(error_of({{"norm_num_groups", 24}}).find("not divisible by norm_num_groups=24"), std::string::npos);
}

TEST(UNetConfig, UnknownKeysAreRejectedAndBookkeepingKeysIgnored) {
  EXPECT_EQ(error_of({{"use_fancy_attention", true}}),
            "[unet] cfg: unknown key 'use_fancy_attention'=true (websd does not know what it changes; remove it if it "
            "has no effect)");
  EXPECT_NO_THROW(unet_config_from_json({{"_diffusers_version", "0.6.0"},
                                         {"_name_or_path", "x"},
                                         {"dropout", 0.1},
                                         {"mid_block_only_cross_attention", false}},
                                        "cfg"));
}

TEST(UNetConfig, ReadingAMissingFileNamesIt) {
  try {
    unet_config_read("/nonexistent/unet/config.json");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/unet/config.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace websd
