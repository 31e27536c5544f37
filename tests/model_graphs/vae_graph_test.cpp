// The VAE decode and encode graphs against diffusers' float64 output on the tiny fixture model, and
// on configurations of our own with random weights.
#include <gtest/gtest.h>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_test_util.h"
#include "graph_test_support.h"
#include "import/diffusers_checkpoint.h"
#include "models/graphs/sd_graphs.h"

namespace websd {
namespace {

void expect_matches(const cpu::CpuTensor& actual, const std::string& key) {
  const cpu::CpuTensor expected = test::expected_tensor(key);
  ASSERT_EQ(actual.type.shape, expected.type.shape) << key;
  const double error = cpu::test::relative_l2(*actual.f32, *expected.f32);
  std::cout << "[ vae      ] " << key << ": relative L2 error " << error << "\n";
  EXPECT_LT(error, 1e-4) << key;
}

TEST(VaeGraph, DecodeMatchesTheReferenceOnTheTinyModel) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  const graph::Function function = vae_decode_graph(test::tiny_vae_config(), 1, 16, 16);
  const auto outputs = test::run_on_cpu(
      function, test::checkpoint_weights(checkpoint.component("vae"), vae_params(test::tiny_vae_config())),
      {test::expected_tensor("vae.dec.in")});
  expect_matches(outputs[0], "vae.dec.out");
}

TEST(VaeGraph, EncodeMatchesTheReferenceOnTheTinyModel) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  const graph::Function function = vae_encode_graph(test::tiny_vae_config(), 1, 128, 128);
  const auto outputs = test::run_on_cpu(
      function, test::checkpoint_weights(checkpoint.component("vae"), vae_params(test::tiny_vae_config())),
      {test::expected_tensor("vae.enc.in")});
  ASSERT_EQ(outputs.size(), 2u);
  expect_matches(outputs[0], "vae.enc.mean");
  expect_matches(outputs[1], "vae.enc.logvar");
}

TEST(VaeGraph, TinyModelDecodesAndEncodesNonSquareSizes) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  const auto weights = test::checkpoint_weights(checkpoint.component("vae"), vae_params(test::tiny_vae_config()));
  const graph::Function decode = vae_decode_graph(test::tiny_vae_config(), 1, 4, 6);
  const auto image = test::run_on_cpu(decode, weights, {cpu::test::random_tensor({1, 4, 4, 6}, 8)});
  EXPECT_EQ(image[0].type.shape, (Shape{1, 3, 32, 48}));
  test::expect_finite_and_varied(image[0], "decode 4x6");
  const graph::Function encode = vae_encode_graph(test::tiny_vae_config(), 1, 32, 48);
  const auto moments = test::run_on_cpu(encode, weights, image);
  EXPECT_EQ(moments[0].type.shape, (Shape{1, 4, 4, 6}));
  test::expect_finite_and_varied(moments[0], "encode 32x48 mean");
}

void run_random_vae(const VaeConfig& config, std::int64_t latent_h, std::int64_t latent_w) {
  const std::int64_t scale = std::int64_t{1} << (config.block_count() - 1);
  const auto weights = test::random_weights(vae_params(config), 9);
  const auto image = test::run_on_cpu(vae_decode_graph(config, 2, latent_h, latent_w), weights,
                                      {cpu::test::random_tensor({2, config.latent_channels, latent_h, latent_w}, 10)});
  EXPECT_EQ(image[0].type.shape, (Shape{2, config.out_channels, latent_h * scale, latent_w * scale}));
  test::expect_finite_and_varied(image[0], "decoded image");
  const auto moments =
      test::run_on_cpu(vae_encode_graph(config, 2, latent_h * scale, latent_w * scale), weights,
                       {cpu::test::random_tensor({2, config.in_channels, latent_h * scale, latent_w * scale}, 11)});
  ASSERT_EQ(moments.size(), 2u);
  for (const auto& moment : moments) {
    EXPECT_EQ(moment.type.shape, (Shape{2, config.latent_channels, latent_h, latent_w}));
    test::expect_finite_and_varied(moment, "latent moments");
  }
  for (const float logvar : *moments[1].f32) {
    ASSERT_GE(logvar, -30.0f);
    ASSERT_LE(logvar, 20.0f);
  }
}

TEST(VaeGraph, ThreeLevelConfigRuns) { run_random_vae(test::three_level_vae_config(), 3, 5); }

TEST(VaeGraph, ConfigWithoutQuantConvsOrAttentionRuns) { run_random_vae(test::plain_two_level_vae_config(), 4, 3); }

TEST(VaeGraph, RefusesImagesTheEncoderCannotHalve) {
  try {
    vae_encode_graph(test::tiny_vae_config(), 1, 128, 100);
    FAIL() << "width 100 accepted by a factor-8 VAE";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("128x100 is not divisible by 8"), std::string::npos) << error.what();
  }
  EXPECT_THROW(vae_decode_graph(test::tiny_vae_config(), 1, 0, 4), Error);
}

}  // namespace
}  // namespace websd
