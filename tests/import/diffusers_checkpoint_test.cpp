// Opening diffusers folders: the real tiny-sd15 fixture and the layouts real checkpoints come in
// (prefix-less CLIP names, f32/bf16/f16, variants, shards).
#include "import/diffusers_checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "import/checkpoint_folder.h"
#include "support/fixtures.h"

namespace websd {
namespace {

// The CLIP text encoder's parameters for a config, written out by hand for this test (the real
// lists belong to the models module).
std::vector<ParamSpec> clip_text_params(const nlohmann::json& config) {
  const std::int64_t width = config.at("hidden_size"), inner = config.at("intermediate_size");
  const std::int64_t vocab = config.at("vocab_size"), positions = config.at("max_position_embeddings");
  std::vector<ParamSpec> params = {{"text_model.embeddings.token_embedding.weight", {vocab, width}},
                                   {"text_model.embeddings.position_embedding.weight", {positions, width}}};
  for (int layer = 0; layer < config.at("num_hidden_layers").get<int>(); ++layer) {
    const std::string prefix = "text_model.encoder.layers." + std::to_string(layer) + ".";
    for (const char* projection : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      params.push_back({prefix + "self_attn." + projection + ".weight", {width, width}});
      params.push_back({prefix + "self_attn." + projection + ".bias", {width}});
    }
    for (const char* norm : {"layer_norm1", "layer_norm2"}) {
      params.push_back({prefix + norm + ".weight", {width}});
      params.push_back({prefix + norm + ".bias", {width}});
    }
    params.push_back({prefix + "mlp.fc1.weight", {inner, width}});
    params.push_back({prefix + "mlp.fc1.bias", {inner}});
    params.push_back({prefix + "mlp.fc2.weight", {width, inner}});
    params.push_back({prefix + "mlp.fc2.bias", {width}});
  }
  params.push_back({"text_model.final_layer_norm.weight", {width}});
  params.push_back({"text_model.final_layer_norm.bias", {width}});
  return params;
}

TEST(DiffusersCheckpoint, OpensTheTinySd15Fixture) {
  const std::string dir = test::fixture_path("tiny-sd15/model");
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  EXPECT_EQ(checkpoint.pipeline_class(), "StableDiffusionPipeline");
  ASSERT_EQ(checkpoint.components().size(), 5u);  // the [null, null] entries are left out

  const auto& unet = checkpoint.component("unet");
  EXPECT_EQ(unet.class_name(), "UNet2DConditionModel");
  EXPECT_EQ(unet.library(), "diffusers");
  EXPECT_EQ(unet.config().at("block_out_channels"), nlohmann::json({32, 64, 64}));
  EXPECT_EQ(unet.tensor_names().size(), 494u);
  EXPECT_EQ(unet.weight_files().size(), 1u);
  EXPECT_EQ(unet.at("conv_in.weight").entry->shape, (Shape{32, 4, 3, 3}));
  EXPECT_EQ(checkpoint.component("vae").config().at("scaling_factor").get<double>(), 0.18215);

  const auto& tokenizer = checkpoint.component("tokenizer");
  EXPECT_EQ(tokenizer.kind(), ComponentKind::kTokenizer);
  EXPECT_FALSE(tokenizer.has_weights());
  EXPECT_EQ(tokenizer.dir(), dir + "/tokenizer");
  EXPECT_EQ(checkpoint.component("scheduler").kind(), ComponentKind::kScheduler);
  EXPECT_THROW((void)tokenizer.config(), Error);
}

TEST(DiffusersCheckpoint, FixtureTextEncoderStoresThePrefixAndBindsCompletely) {
  const auto checkpoint = DiffusersCheckpoint::open(test::fixture_path("tiny-sd15/model"));
  const auto& text_encoder = checkpoint.component("text_encoder");
  EXPECT_EQ(text_encoder.naming(), TensorNaming::kClipTextPrefix);
  EXPECT_FALSE(text_encoder.names_were_normalised());  // the fixture's file carries "text_model."
  for (const auto& name : text_encoder.tensor_names()) EXPECT_EQ(name.rfind("text_model.", 0), 0u) << name;

  const auto bound = text_encoder.bind(clip_text_params(text_encoder.config()));
  EXPECT_EQ(bound.size(), 36u);
  // Lookups accept the prefix-less form too.
  EXPECT_EQ(text_encoder.find("final_layer_norm.weight"), text_encoder.find("text_model.final_layer_norm.weight"));
}

TEST(DiffusersCheckpoint, FixtureWeightsUpcastExactlyFromF16) {
  const auto checkpoint = DiffusersCheckpoint::open(test::fixture_path("tiny-sd15/model"));
  const auto& unet = checkpoint.component("unet");
  const auto& location = unet.at("conv_in.weight");
  ASSERT_EQ(location.entry->dtype, DType::kF16);
  const HostTensor weights = unet.read_f32("conv_in.weight");
  ASSERT_EQ(weights.data.size(), 32u * 4 * 3 * 3);
  const auto raw = location.file->bytes(*location.entry);
  for (std::size_t i = 0; i < weights.data.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, raw.data() + 2 * i, 2);
    ASSERT_EQ(weights.data[i], f16_to_f32(bits)) << i;
  }
}

void expect_reads_back(const CheckpointComponent& component, const std::vector<ParamSpec>& params) {
  for (const auto& param : params) {
    const HostTensor tensor = component.read_f32(param.name);
    EXPECT_EQ(tensor.shape, param.shape) << param.name;
    for (std::size_t i = 0; i < tensor.data.size(); ++i) {
      ASSERT_EQ(tensor.data[i], test::checkpoint_value(i)) << param.name << " element " << i;
    }
  }
}

class EveryDtype : public ::testing::TestWithParam<DType> {};

TEST_P(EveryDtype, UpcastsOnRead) {
  const auto dir = test::write_checkpoint_folder("ckpt-dtype", {.dtype = GetParam()});
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  const auto& unet = checkpoint.component("unet");
  EXPECT_EQ(unet.stats().dtypes.at(std::string(dtype_name(GetParam()))), test::unet_params().size());
  expect_reads_back(unet, test::unet_params());
  expect_reads_back(checkpoint.component("text_encoder"), test::text_encoder_params());
}

INSTANTIATE_TEST_SUITE_P(Float, EveryDtype, ::testing::Values(DType::kF32, DType::kF16, DType::kBF16));

TEST(DiffusersCheckpoint, PrefixlessTextEncoderIsNormalised) {
  const auto dir = test::write_checkpoint_folder("ckpt-noprefix", {.text_prefix = false, .position_ids = true});
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  const auto& text_encoder = checkpoint.component("text_encoder");
  EXPECT_TRUE(text_encoder.names_were_normalised());
  EXPECT_NE(text_encoder.find("text_model.final_layer_norm.bias"), nullptr);
  EXPECT_EQ(text_encoder.find("text_model.final_layer_norm.bias")->entry->name, "final_layer_norm.bias");
  // The expected list may use either form; the position_ids buffer is neither missing nor unexpected.
  EXPECT_EQ(text_encoder.bind(test::text_encoder_params()).size(), 6u);
  std::vector<ParamSpec> prefixless = test::text_encoder_params();
  for (auto& spec : prefixless) spec.name.erase(0, std::strlen("text_model."));
  EXPECT_TRUE(text_encoder.check(prefixless).ok()) << text_encoder.check(prefixless).summary();
  const auto stats = text_encoder.stats();
  EXPECT_EQ(stats.tensors, 7u);
  EXPECT_EQ(stats.buffers, 1u);
  EXPECT_EQ(stats.parameters, 40u + 24 + 16 + 4 + 4 + 4);
  expect_reads_back(text_encoder, test::text_encoder_params());
}

TEST(DiffusersCheckpoint, ShardedUnetIsOneComponent) {
  const auto dir = test::write_checkpoint_folder("ckpt-shards", {.unet_shards = 3});
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  const auto& unet = checkpoint.component("unet");
  EXPECT_EQ(unet.weight_files().size(), 3u);
  EXPECT_EQ(unet.index_path(), dir + "/unet/diffusion_pytorch_model.safetensors.index.json");
  EXPECT_EQ(unet.at("conv_in.bias").file->path(), dir + "/unet/diffusion_pytorch_model-00002-of-00003.safetensors");
  EXPECT_EQ(unet.bind(test::unet_params()).size(), 6u);
  expect_reads_back(unet, test::unet_params());
}

TEST(DiffusersCheckpoint, VariantFilesAreFoundAlone) {
  const auto dir = test::write_checkpoint_folder("ckpt-variant", {.variant = "fp16", .unet_shards = 2});
  const auto checkpoint = DiffusersCheckpoint::open(dir);  // no plain files: the only variant
  EXPECT_EQ(checkpoint.component("unet").variant(), "fp16");
  EXPECT_EQ(checkpoint.component("unet").index_path(),
            dir + "/unet/diffusion_pytorch_model.safetensors.index.fp16.json");
  EXPECT_EQ(checkpoint.component("vae").weight_files().front()->path(),
            dir + "/vae/diffusion_pytorch_model.fp16.safetensors");
  const auto explicitly = DiffusersCheckpoint::open(dir, test::variant_options("fp16"));
  expect_reads_back(explicitly.component("text_encoder"), test::text_encoder_params());
}

TEST(DiffusersCheckpoint, PlainFilesWinOverAVariantUnlessAsked) {
  const auto dir = test::write_checkpoint_folder("ckpt-both", {.dtype = DType::kF32});
  test::write_tensors(
      dir + "/vae/diffusion_pytorch_model.fp16.safetensors",
      {{"decoder.conv_in.weight", {8, 4, 3, 3}, DType::kF16}, {"decoder.conv_in.bias", {8}, DType::kF16}});
  EXPECT_EQ(DiffusersCheckpoint::open(dir).component("vae").at("decoder.conv_in.bias").entry->dtype, DType::kF32);
  // Asking for fp16 fails for the components that lack it, naming the folder and what exists.
  try {
    (void)DiffusersCheckpoint::open(dir, test::variant_options("fp16"));
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no 'fp16' weights"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("plain weights present"), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).find("variants present"), std::string::npos) << error.what();
  }
}

TEST(DiffusersCheckpoint, SymlinkedWeightsAsInTheHuggingFaceCache) {
  // The hub cache keeps files in blobs/ and links them from snapshots/<revision>/.
  const auto dir = test::write_checkpoint_folder("ckpt-links", {.unet_shards = 2});
  const std::string blobs = test::make_temp_dir("ckpt-blobs");
  for (const char* name : {"diffusion_pytorch_model-00001-of-00002.safetensors",
                           "diffusion_pytorch_model.safetensors.index.json", "config.json"}) {
    std::filesystem::rename(dir + "/unet/" + name, blobs + "/" + name);
    std::filesystem::create_symlink(blobs + "/" + name, dir + "/unet/" + name);
  }
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  expect_reads_back(checkpoint.component("unet"), test::unet_params());
}

TEST(DiffusersCheckpoint, UnknownComponentLookupListsWhatExists) {
  const auto checkpoint = DiffusersCheckpoint::open(test::write_checkpoint_folder("ckpt-lookup"));
  EXPECT_EQ(checkpoint.find("safety_checker"), nullptr);
  try {
    (void)checkpoint.component("text_encoder_2");
    FAIL();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("model_index.json: has no component 'text_encoder_2'"), std::string::npos) << message;
    EXPECT_NE(message.find("scheduler, text_encoder, tokenizer, unet, vae"), std::string::npos) << message;
  }
  try {
    (void)checkpoint.component("unet").read_f32("conv_middle.weight");
    FAIL();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("unet/diffusion_pytorch_model.safetensors: unet has no tensor named 'conv_middle.weight'"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace websd
