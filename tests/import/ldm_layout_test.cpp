// The single-file layout against tensor names and shapes that real SD 1.5 (v1-5-pruned) and SD 2.1
// (v2-1_768-ema-pruned) checkpoints hold, so that websd reads and writes the files other tools use.
#include "import/ldm_layout.h"

#include <gtest/gtest.h>

#include <map>

#include "io/json_file.h"
#include "models/model_presets.h"

namespace websd {
namespace {

std::map<std::string, Shape> layout_of(const std::string& preset_name, TextEncoderLayout text) {
  const ModelPreset& preset = model_preset(preset_name);
  const std::vector<LdmTensor> layout = ldm_layout(clip_config_from_json(json_parse(preset.text_encoder, "te"), "te"),
                                                   text, unet_config_from_json(json_parse(preset.unet, "unet"), "unet"),
                                                   vae_config_from_json(json_parse(preset.vae, "vae"), "vae"));
  std::map<std::string, Shape> shapes;
  for (const LdmTensor& tensor : layout) {
    EXPECT_TRUE(shapes.emplace(tensor.name, tensor.shape).second) << "twice: " << tensor.name;
  }
  return shapes;
}

void expect_holds(const std::map<std::string, Shape>& layout, const std::map<std::string, Shape>& real) {
  for (const auto& [name, shape] : real) {
    const auto found = layout.find(name);
    ASSERT_NE(found, layout.end()) << "the layout lacks " << name;
    EXPECT_EQ(found->second, shape) << name;
  }
}

TEST(LdmLayout, HoldsTheTensorsOfStableDiffusion15) {
  const auto layout = layout_of("sd15", TextEncoderLayout::kHfClip);
  EXPECT_EQ(layout.size(), 1130u);  // v1-5-pruned without position_ids and the DDPM buffers
  const std::string u = "model.diffusion_model.";
  const std::string v = "first_stage_model.";
  const std::string t = "cond_stage_model.transformer.text_model.";
  expect_holds(layout, {{u + "input_blocks.0.0.weight", {320, 4, 3, 3}},
                        {u + "time_embed.0.weight", {1280, 320}},
                        {u + "time_embed.2.weight", {1280, 1280}},
                        {u + "input_blocks.1.0.in_layers.0.weight", {320}},
                        {u + "input_blocks.1.0.emb_layers.1.weight", {320, 1280}},
                        {u + "input_blocks.1.1.proj_in.weight", {320, 320, 1, 1}},
                        {u + "input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight", {320, 768}},
                        {u + "input_blocks.1.1.transformer_blocks.0.ff.net.0.proj.weight", {2560, 320}},
                        {u + "input_blocks.3.0.op.weight", {320, 320, 3, 3}},
                        {u + "input_blocks.4.0.skip_connection.weight", {640, 320, 1, 1}},
                        {u + "input_blocks.11.0.out_layers.3.weight", {1280, 1280, 3, 3}},
                        {u + "middle_block.1.proj_out.weight", {1280, 1280, 1, 1}},
                        {u + "middle_block.2.out_layers.3.bias", {1280}},
                        {u + "output_blocks.0.0.skip_connection.weight", {1280, 2560, 1, 1}},
                        {u + "output_blocks.2.1.conv.weight", {1280, 1280, 3, 3}},
                        {u + "output_blocks.5.2.conv.weight", {1280, 1280, 3, 3}},
                        {u + "output_blocks.8.2.conv.weight", {640, 640, 3, 3}},
                        {u + "output_blocks.11.1.proj_out.weight", {320, 320, 1, 1}},
                        {u + "out.0.weight", {320}},
                        {u + "out.2.weight", {4, 320, 3, 3}},
                        {v + "encoder.conv_in.weight", {128, 3, 3, 3}},
                        {v + "encoder.down.0.downsample.conv.weight", {128, 128, 3, 3}},
                        {v + "encoder.down.1.block.0.nin_shortcut.weight", {256, 128, 1, 1}},
                        {v + "encoder.mid.attn_1.q.weight", {512, 512, 1, 1}},
                        {v + "encoder.mid.attn_1.q.bias", {512}},
                        {v + "encoder.mid.attn_1.norm.weight", {512}},
                        {v + "encoder.mid.block_2.conv1.weight", {512, 512, 3, 3}},
                        {v + "encoder.norm_out.weight", {512}},
                        {v + "encoder.conv_out.weight", {8, 512, 3, 3}},
                        {v + "quant_conv.weight", {8, 8, 1, 1}},
                        {v + "post_quant_conv.weight", {4, 4, 1, 1}},
                        {v + "decoder.conv_in.weight", {512, 4, 3, 3}},
                        {v + "decoder.up.3.upsample.conv.weight", {512, 512, 3, 3}},
                        {v + "decoder.up.0.block.0.nin_shortcut.weight", {128, 256, 1, 1}},
                        {v + "decoder.up.3.block.2.conv2.weight", {512, 512, 3, 3}},
                        {v + "decoder.mid.attn_1.proj_out.weight", {512, 512, 1, 1}},
                        {v + "decoder.norm_out.bias", {128}},
                        {t + "embeddings.token_embedding.weight", {49408, 768}},
                        {t + "embeddings.position_embedding.weight", {77, 768}},
                        {t + "encoder.layers.11.mlp.fc2.weight", {768, 3072}},
                        {t + "encoder.layers.0.self_attn.q_proj.weight", {768, 768}},
                        {t + "final_layer_norm.weight", {768}}});
  EXPECT_EQ(layout.count(v + "decoder.up.0.upsample.conv.weight"), 0u);  // the last level does not upsample
  EXPECT_EQ(layout.count(u + "output_blocks.11.2.conv.weight"), 0u);
}

TEST(LdmLayout, HoldsTheTensorsOfStableDiffusion21) {
  const auto layout = layout_of("sd21", TextEncoderLayout::kOpenClip);
  const std::string u = "model.diffusion_model.";
  const std::string o = "cond_stage_model.model.";
  expect_holds(layout, {{o + "token_embedding.weight", {49408, 1024}},
                        {o + "positional_embedding", {77, 1024}},
                        {o + "transformer.resblocks.0.attn.in_proj_weight", {3072, 1024}},
                        {o + "transformer.resblocks.0.attn.in_proj_bias", {3072}},
                        {o + "transformer.resblocks.22.attn.out_proj.weight", {1024, 1024}},
                        {o + "transformer.resblocks.0.ln_1.weight", {1024}},
                        {o + "transformer.resblocks.0.mlp.c_fc.weight", {4096, 1024}},
                        {o + "transformer.resblocks.0.mlp.c_proj.weight", {1024, 4096}},
                        {o + "ln_final.weight", {1024}},
                        {u + "input_blocks.1.1.proj_in.weight", {320, 320}},
                        {u + "input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight", {320, 1024}},
                        {u + "middle_block.1.proj_out.weight", {1280, 1280}}});
  // diffusers' SD 2.x text encoder has 23 layers: the 24th block of the file is not part of it.
  EXPECT_EQ(layout.count(o + "transformer.resblocks.23.attn.in_proj_weight"), 0u);
}

TEST(LdmLayout, FusedProjectionsStackQKeyValueInOrder) {
  const ModelPreset& preset = model_preset("tiny");
  ClipTextConfig clip = clip_config_from_json(json_parse(preset.text_encoder, "te"), "te");
  const auto layout =
      ldm_layout(clip, TextEncoderLayout::kOpenClip, unet_config_from_json(json_parse(preset.unet, "unet"), "unet"),
                 vae_config_from_json(json_parse(preset.vae, "vae"), "vae"));
  const auto fused = std::find_if(layout.begin(), layout.end(), [](const LdmTensor& t) {
    return t.name == "cond_stage_model.model.transformer.resblocks.1.attn.in_proj_bias";
  });
  ASSERT_NE(fused, layout.end());
  ASSERT_EQ(fused->parts.size(), 3u);
  EXPECT_EQ(fused->parts[0].name, "text_model.encoder.layers.1.self_attn.q_proj.bias");
  EXPECT_EQ(fused->parts[1].name, "text_model.encoder.layers.1.self_attn.k_proj.bias");
  EXPECT_EQ(fused->parts[2].name, "text_model.encoder.layers.1.self_attn.v_proj.bias");
  EXPECT_EQ(fused->shape, (Shape{3 * clip.hidden_size}));
  EXPECT_EQ(ldm_ema_name("model.diffusion_model.out.2.weight"), "model_ema.diffusion_modelout2weight");
}

}  // namespace
}  // namespace websd
