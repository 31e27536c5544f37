// The CPU backend on the fixture model: what it reports, its outputs against the float64 references
// (through the DiffusionBackend interface: id batches, timestep broadcast, encoder outputs), its
// executor cache, and its errors for checkpoints that do not fit.
#include "backends/checkpoint_backend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backend_test_support.h"
#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_reader.h"
#include "models/random_checkpoint.h"
#include "pipeline/host_calls.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

TEST(CheckpointBackend, ReportsTheModelFromItsConfigs) {
  const ModelInfo& info = test::tiny_backend().info();
  EXPECT_EQ(info.latent_channels, 4);
  EXPECT_EQ(info.vae_scale_factor, 8);
  EXPECT_DOUBLE_EQ(info.vae_scaling_factor, 0.18215);
  EXPECT_EQ(info.max_tokens, 77);
  EXPECT_EQ(info.sample_height, 16);
  EXPECT_EQ(info.sample_width, 16);
  EXPECT_EQ(info.latent_size_multiple, 4);  // three UNet levels
  EXPECT_EQ(info.name, "model");
}

TEST(CheckpointBackend, TextEncoderMatchesTheReference) {
  const std::vector<std::int64_t> ids =
      SafetensorsFile(test::fixture_path("tiny-sd15/reference/expected.safetensors")).read_i64("te.ids");
  const HostTensor out = test::tiny_backend().encode_text(ids, 2);
  const HostTensor expected = test::reference_tensor("expected", "te.out");
  EXPECT_EQ(out.shape, expected.shape);
  EXPECT_LT(test::relative_l2(out.data, expected.data), 1e-4);
}

TEST(CheckpointBackend, UnetMatchesTheReferenceWithOneTimestepForTheBatch) {
  const HostTensor sample = test::reference_tensor("expected", "unet.sample");
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  for (const int timestep : {981, 1}) {
    const HostTensor out = call_unet(test::tiny_backend(), sample, timestep, context);
    const HostTensor expected = test::reference_tensor("expected", "unet.out." + std::to_string(timestep));
    EXPECT_EQ(out.shape, expected.shape);
    EXPECT_LT(test::relative_l2(out.data, expected.data), 1e-4) << "t = " << timestep;
  }
}

TEST(CheckpointBackend, VaeDecodeAndEncodeMatchTheReference) {
  backends::CheckpointBackend& backend = test::tiny_backend();
  const HostTensor image = call_vae_decode(backend, test::reference_tensor("expected", "vae.dec.in"));
  EXPECT_LT(test::relative_l2(image.data, test::reference_tensor("expected", "vae.dec.out").data), 1e-4);
  const auto [mean, logvar] = backend.vae_encode(test::reference_tensor("expected", "vae.enc.in"));
  EXPECT_EQ(mean.shape, (Shape{1, 4, 16, 16}));
  EXPECT_LT(test::relative_l2(mean.data, test::reference_tensor("expected", "vae.enc.mean").data), 1e-4);
  EXPECT_LT(test::relative_l2(logvar.data, test::reference_tensor("expected", "vae.enc.logvar").data), 1e-4);
}

TEST(CheckpointBackend, CachesOneExecutorPerNetworkAndShape) {
  backends::CheckpointBackend backend(test::tiny_model_dir(), backends::Residency::kAllNetworks);
  const HostTensor small({1, 4, 8, 8});
  const HostTensor context({1, 77, 32});
  EXPECT_EQ(backend.executor_count(), 0u);
  call_unet(backend, small, 10, context);
  call_unet(backend, small, 500, context);
  EXPECT_EQ(backend.executor_count(), 1u);
  call_unet(backend, HostTensor({1, 4, 8, 16}), 10, context);
  EXPECT_EQ(backend.executor_count(), 2u);
  call_vae_decode(backend, small);
  EXPECT_EQ(backend.executor_count(), 3u);
}

// The --model path compiles with the cpu target's pass list, as `websd build` does: the UNet reads
// the same weights as the artifact's (Q/K/V projections merged into one), and fused elementwise
// groups run (on the runtime's interpreting kernel).
TEST(CheckpointBackend, CompilesWithTheTargetsPassListAsAnArtifact) {
  backends::CheckpointBackend backend(test::tiny_model_dir());
  runtime::OpProfile profile;
  backend.set_profile(&profile);
  const HostTensor sample = test::reference_tensor("expected", "unet.sample");
  call_unet(backend, sample, 500, test::reference_tensor("expected", "unet.ctx"));
  const nlohmann::json manifest = json_read_file(test::tiny_artifact_dir() + "/manifest.json");
  const auto& unet_weights = manifest.at("sections").at("launch_lists").at("unet").at("weights");
  EXPECT_EQ(backend.loaded_weight_count(), unet_weights.size());
  bool merged = false;
  for (const auto& weight : unet_weights)
    merged = merged || weight.at("name").get<std::string>().find("to_qkv") != std::string::npos;
  EXPECT_TRUE(merged) << "the artifact's UNet has merged projections";
  bool fused = false;
  for (const auto& [key, totals] : profile.by_op) fused = fused || key.rfind("fused_elementwise", 0) == 0;
  EXPECT_TRUE(fused) << "no fused elementwise launch ran";
}

TEST(CheckpointBackend, KeepsOnlyTheCalledNetworkLoadedByDefault) {
  backends::CheckpointBackend backend(test::tiny_model_dir());
  const HostTensor latents({1, 4, 8, 8});
  call_unet(backend, latents, 10, HostTensor({1, 77, 32}));
  const std::size_t unet_weights = backend.loaded_weight_count();
  EXPECT_GT(unet_weights, 100u);
  call_vae_decode(backend, latents);  // releases the UNet before loading the VAE
  EXPECT_EQ(backend.executor_count(), 1u);
  EXPECT_LT(backend.loaded_weight_count(), unet_weights);
  const HostTensor again = call_unet(backend, latents, 10, HostTensor({1, 77, 32}));  // reloads
  EXPECT_EQ(backend.loaded_weight_count(), unet_weights);
  EXPECT_EQ(again.shape, latents.shape);
}

// A random tiny checkpoint in a fresh folder, with `edit` applied to its unet/config.json.
std::string edited_checkpoint(const std::function<void(nlohmann::json&)>& edit) {
  const std::string dir = test::make_temp_dir("engine") + "/model";
  random_checkpoint_write({"tiny", dir, 0, "", false}, [](const std::string&) {});
  const std::string config_path = dir + "/unet/config.json";
  nlohmann::json config = json_read_file(config_path);
  edit(config);
  std::ofstream(config_path) << config.dump(2);
  return dir;
}

std::string open_error(const std::string& dir) {
  try {
    backends::CheckpointBackend backend(dir);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(CheckpointBackend, WeightsThatDoNotFitTheConfigAreOneErrorNamingTheFile) {
  const std::string dir = edited_checkpoint([](nlohmann::json& config) { config["layers_per_block"] = 1; });
  const std::string error = open_error(dir);
  EXPECT_NE(error.find("diffusion_pytorch_model.safetensors"), std::string::npos) << error;
  EXPECT_NE(error.find("unexpected"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(CheckpointBackend, ComponentsFromDifferentModelsAreRejected) {
  const std::string dir = edited_checkpoint([](nlohmann::json& config) { config["cross_attention_dim"] = 48; });
  EXPECT_NE(open_error(dir).find("cross_attention_dim differs from text_encoder hidden_size"), std::string::npos)
      << open_error(dir);
}

TEST(CheckpointBackend, AMissingFolderIsAnError) {
  EXPECT_NE(open_error("/nonexistent/websd-model").find("/nonexistent/websd-model"), std::string::npos);
}

}  // namespace
}  // namespace websd
