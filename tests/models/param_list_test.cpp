// The parameter lists are proven against real checkpoints: the tiny fixture's safetensors files (written
// by diffusers/transformers) hold exactly these names and shapes, and the SD 1.5 / 2.1 presets add up
// to the published parameter counts.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "io/json_file.h"
#include "io/safetensors_reader.h"
#include "models/model_params.h"
#include "models/model_presets.h"
#include "support/fixtures.h"

namespace websd {
namespace {

std::map<std::string, Shape> as_map(const std::vector<ModelParam>& params) {
  std::map<std::string, Shape> out;
  for (const auto& param : params) out[param.spec.name] = param.spec.shape;
  EXPECT_EQ(out.size(), params.size()) << "duplicate parameter names";
  return out;
}

// Names and shapes of a checkpoint file, without non-learned buffers.
std::map<std::string, Shape> checkpoint_map(const std::string& relative) {
  const SafetensorsFile file(test::fixture_path(relative));
  std::map<std::string, Shape> out;
  for (const auto& entry : file.entries()) {
    if (entry.name.size() >= 12 && entry.name.compare(entry.name.size() - 12, 12, "position_ids") == 0) continue;
    out[entry.name] = entry.shape;
  }
  return out;
}

std::vector<ModelParam> preset_clip(const std::string& name) {
  return clip_text_params(clip_config_from_json(json_parse(model_preset(name).text_encoder, name), name));
}
std::vector<ModelParam> preset_unet(const std::string& name) {
  return unet_params(unet_config_from_json(json_parse(model_preset(name).unet, name), name));
}
std::vector<ModelParam> preset_vae(const std::string& name) {
  return vae_params(vae_config_from_json(json_parse(model_preset(name).vae, name), name));
}

TEST(ParamList, TextEncoderEqualsTheFixtureCheckpoint) {
  const auto config = clip_config_read(test::fixture_path("tiny-sd15/model/text_encoder/config.json"));
  EXPECT_EQ(as_map(clip_text_params(config)), checkpoint_map("tiny-sd15/model/text_encoder/model.safetensors"));
}

TEST(ParamList, UNetEqualsTheFixtureCheckpoint) {
  const auto config = unet_config_read(test::fixture_path("tiny-sd15/model/unet/config.json"));
  EXPECT_EQ(as_map(unet_params(config)), checkpoint_map("tiny-sd15/model/unet/diffusion_pytorch_model.safetensors"));
}

TEST(ParamList, VaeEqualsTheFixtureCheckpoint) {
  const auto config = vae_config_read(test::fixture_path("tiny-sd15/model/vae/config.json"));
  EXPECT_EQ(as_map(vae_params(config)), checkpoint_map("tiny-sd15/model/vae/diffusion_pytorch_model.safetensors"));
}

TEST(ParamList, Sd15CountsMatchThePublishedModels) {
  EXPECT_EQ(param_count(preset_unet("sd15")), 859'520'964);
  EXPECT_EQ(param_count(preset_clip("sd15")), 123'060'480);  // CLIPTextModel ViT-L/14, no projection
  EXPECT_EQ(param_count(preset_vae("sd15")), 83'653'863);
}

TEST(ParamList, Sd21CountsMatchThePublishedModels) {
  EXPECT_EQ(param_count(preset_unet("sd21")), 865'910'724);
  EXPECT_EQ(param_count(preset_clip("sd21")), 340'387'840);  // OpenCLIP ViT-H text tower, 23 layers
  EXPECT_EQ(param_count(preset_vae("sd21")), 83'653'863);
}

TEST(ParamList, ProjectionsAreConvsInSd15AndLinearsInSd21) {
  const auto sd15 = as_map(preset_unet("sd15"));
  const auto sd21 = as_map(preset_unet("sd21"));
  EXPECT_EQ(sd15.at("down_blocks.0.attentions.0.proj_in.weight"), (Shape{320, 320, 1, 1}));
  EXPECT_EQ(sd21.at("down_blocks.0.attentions.0.proj_in.weight"), (Shape{320, 320}));
  EXPECT_EQ(sd21.at("up_blocks.3.attentions.2.proj_out.weight"), (Shape{320, 320}));
  EXPECT_EQ(sd15.at("mid_block.attentions.0.transformer_blocks.0.attn2.to_k.weight"), (Shape{1280, 768}));
  EXPECT_EQ(sd21.at("mid_block.attentions.0.transformer_blocks.0.attn2.to_v.weight"), (Shape{1280, 1024}));
  EXPECT_EQ(sd15.at("up_blocks.1.resnets.2.conv1.weight"), (Shape{1280, 1920, 3, 3}));
  EXPECT_EQ(sd15.count("down_blocks.3.downsamplers.0.conv.weight"), 0u);
  EXPECT_EQ(sd15.count("up_blocks.3.upsamplers.0.conv.weight"), 0u);
}

TEST(ParamList, TransformerDepthFollowsThePerBlockList) {
  UNetConfig config = unet_config_from_json({{"transformer_layers_per_block", {1, 2, 3, 4}}}, "cfg");
  const auto params = as_map(unet_params(config));
  EXPECT_EQ(params.count("down_blocks.2.attentions.1.transformer_blocks.2.norm3.weight"), 1u);
  EXPECT_EQ(params.count("down_blocks.2.attentions.1.transformer_blocks.3.norm3.weight"), 0u);
  EXPECT_EQ(params.count("up_blocks.1.attentions.0.transformer_blocks.2.norm1.weight"), 1u);  // mirrors block 2
  EXPECT_EQ(params.count("mid_block.attentions.0.transformer_blocks.3.norm1.weight"), 1u);    // last entry
}

TEST(ParamList, VaeOptionalPartsFollowTheConfig) {
  const auto params = as_map(vae_params(vae_config_from_json(
      {{"use_quant_conv", false}, {"use_post_quant_conv", false}, {"mid_block_add_attention", false}}, "cfg")));
  for (const auto& [name, shape] : params) {
    EXPECT_EQ(name.find("quant_conv"), std::string::npos) << name;
    EXPECT_EQ(name.find("attentions"), std::string::npos) << name;
  }
  EXPECT_EQ(params.count("decoder.mid_block.resnets.1.conv2.weight"), 1u);
}

TEST(ParamList, RolesAndFanInDescribeEachTensor) {
  const auto params = preset_unet("tiny");
  for (const auto& param : params) {
    const auto& name = param.spec.name;
    if (name == "conv_in.weight" || name == "conv_in.bias") {
      EXPECT_EQ(param.fan_in, 4 * 3 * 3) << name;
      EXPECT_EQ(param.role, name == "conv_in.weight" ? ParamRole::kWeight : ParamRole::kBias);
    }
    if (name == "time_embedding.linear_1.weight") {
      EXPECT_EQ(param.fan_in, 32);
    }
    if (name == "conv_norm_out.weight") {
      EXPECT_EQ(param.role, ParamRole::kNormWeight);
    }
    if (name == "conv_norm_out.bias") {
      EXPECT_EQ(param.role, ParamRole::kNormBias);
    }
    if (param.role == ParamRole::kWeight || param.role == ParamRole::kBias) {
      EXPECT_GT(param.fan_in, 0) << name;
    }
  }
  const auto clip = preset_clip("tiny");
  EXPECT_EQ(clip.front().spec.name, "text_model.embeddings.token_embedding.weight");
  EXPECT_EQ(clip.front().role, ParamRole::kEmbedding);
  EXPECT_EQ(param_specs(clip).size(), clip.size());
  EXPECT_EQ(param_specs(clip)[1], (ParamSpec{"text_model.embeddings.position_embedding.weight", {77, 32}}));
}

}  // namespace
}  // namespace websd
