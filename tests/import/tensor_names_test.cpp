// The canonical tensor names: CLIP text encoders carry "text_model.", everything else as stored.
#include "import/tensor_names.h"

#include <gtest/gtest.h>

namespace websd {
namespace {

TEST(TensorNames, ClipTextModelsGetThePrefix) {
  const auto clip = tensor_naming_for_class("CLIPTextModel");
  EXPECT_EQ(clip, TensorNaming::kClipTextPrefix);
  EXPECT_EQ(tensor_naming_for_class("CLIPTextModelWithProjection"), TensorNaming::kClipTextPrefix);
  EXPECT_EQ(canonical_tensor_name(clip, "encoder.layers.0.mlp.fc1.weight"),
            "text_model.encoder.layers.0.mlp.fc1.weight");
  EXPECT_EQ(canonical_tensor_name(clip, "embeddings.token_embedding.weight"),
            "text_model.embeddings.token_embedding.weight");
  EXPECT_EQ(canonical_tensor_name(clip, "final_layer_norm.bias"), "text_model.final_layer_norm.bias");
  // Already canonical, or outside the text transformer (the projection of ...WithProjection).
  EXPECT_EQ(canonical_tensor_name(clip, "text_model.final_layer_norm.bias"), "text_model.final_layer_norm.bias");
  EXPECT_EQ(canonical_tensor_name(clip, "text_projection.weight"), "text_projection.weight");
  EXPECT_EQ(canonical_tensor_name(clip, "encoder_extra"), "encoder_extra");
}

TEST(TensorNames, OtherModelsKeepTheirNames) {
  const auto unet = tensor_naming_for_class("UNet2DConditionModel");
  EXPECT_EQ(unet, TensorNaming::kAsStored);
  EXPECT_EQ(canonical_tensor_name(unet, "encoder.conv_in.weight"), "encoder.conv_in.weight");
  EXPECT_EQ(canonical_tensor_name(tensor_naming_for_class("AutoencoderKL"), "encoder.conv_in.weight"),
            "encoder.conv_in.weight");
}

TEST(TensorNames, PositionIdsAreBuffers) {
  EXPECT_TRUE(is_buffer_tensor_name("text_model.embeddings.position_ids"));
  EXPECT_TRUE(is_buffer_tensor_name("embeddings.position_ids"));
  EXPECT_TRUE(is_buffer_tensor_name("position_ids"));
  EXPECT_FALSE(is_buffer_tensor_name("text_model.embeddings.position_embedding.weight"));
  EXPECT_FALSE(is_buffer_tensor_name("my_position_ids"));
}

}  // namespace
}  // namespace websd
