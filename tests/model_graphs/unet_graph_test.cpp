// The UNet graph against diffusers' float64 output on the tiny fixture model, and on configurations of
// our own (SD 2.x-style, 2 blocks, non-square latents) with random weights.
#include <gtest/gtest.h>

#include <chrono>

#include "core/error.h"
#include "graph_test_support.h"
#include "import/diffusers_checkpoint.h"
#include "models/graphs/pipeline_helpers.h"
#include "models/graphs/sd_graphs.h"
#include "targets/cpu/runtime/cpu_test_util.h"

namespace websd {
namespace {

TEST(UNetGraph, MatchesTheReferenceOnTheTinyModelAtThreeTimesteps) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  const graph::Function function = unet_graph(test::tiny_unet_config(), 2, 16, 16);
  cpu::CpuExecutor executor(function);
  executor.bind_weights(test::checkpoint_weights(checkpoint.component("unet"), unet_params(test::tiny_unet_config())));
  const cpu::CpuTensor sample = test::expected_tensor("unet.sample");
  const cpu::CpuTensor context = test::expected_tensor("unet.ctx");
  for (const int t : {981, 500, 1}) {
    SCOPED_TRACE(t);
    const auto start = std::chrono::steady_clock::now();
    const auto outputs = executor.run({sample, test::filled_tensor({2}, static_cast<float>(t)), context});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const cpu::CpuTensor expected = test::expected_tensor("unet.out." + std::to_string(t));
    ASSERT_EQ(outputs[0].type.shape, expected.type.shape);
    const double error = cpu::test::relative_l2(*outputs[0].f32, *expected.f32);
    std::cout << "[ unet     ] t=" << t << ": relative L2 error " << error << ", one call (batch 2, 16x16) "
              << seconds * 1e3 << " ms\n";
    EXPECT_LT(error, 1e-4);
  }
}

// unet_cfg (the guidance batch, the UNet and the guidance combination in one function, what a
// device runs per denoising step) against the UNet on the batch (x, x) combined as the host does.
TEST(UNetGraph, UnetCfgEqualsTheUNetBatchCombinedOnTheHost) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  const auto weights = test::checkpoint_weights(checkpoint.component("unet"), unet_params(test::tiny_unet_config()));
  const graph::Function cfg = unet_cfg_graph(test::tiny_unet_config(), 16, 16);
  EXPECT_EQ(cfg.symbol(), "unet_cfg");
  ASSERT_EQ(cfg.inputs().size(), 4u);
  EXPECT_EQ(cfg.value(cfg.inputs()[3]).name, "guidance_scale");
  EXPECT_EQ(test::sorted_weight_specs(cfg), test::sorted_weight_specs(unet_graph(test::tiny_unet_config(), 2, 16, 16)));

  const cpu::CpuTensor sample = cpu::test::random_tensor({1, 4, 16, 16}, 11);
  const cpu::CpuTensor context = test::expected_tensor("unet.ctx");
  const float scale = 7.5f;
  const auto guided = test::run_on_cpu(
      cfg, weights, {sample, test::filled_tensor({1}, 500.0f), context, test::filled_tensor({1}, scale)});
  ASSERT_EQ(guided[0].type.shape, (Shape{1, 4, 16, 16}));

  cpu::CpuTensor pair = cpu::CpuTensor::allocate({DType::kF32, {2, 4, 16, 16}});
  std::copy(sample.f32->begin(), sample.f32->end(), pair.f32->begin());
  std::copy(sample.f32->begin(), sample.f32->end(),
            pair.f32->begin() + static_cast<std::ptrdiff_t>(sample.f32->size()));
  const auto batch = test::run_on_cpu(unet_graph(test::tiny_unet_config(), 2, 16, 16), weights,
                                      {pair, test::filled_tensor({2}, 500.0f), context});
  const std::size_t half = sample.f32->size();
  std::vector<float> expected(half);
  for (std::size_t i = 0; i < half; ++i) {
    const float uncond = (*batch[0].f32)[i], cond = (*batch[0].f32)[half + i];
    expected[i] = uncond + scale * (cond - uncond);
  }
  EXPECT_LT(cpu::test::relative_l2(*guided[0].f32, expected), 1e-6);
  EXPECT_THROW(unet_cfg_graph(test::tiny_unet_config(), 15, 16), Error);
}

TEST(UNetGraph, TinyModelRunsOnNonSquareLatents) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  const graph::Function function = unet_graph(test::tiny_unet_config(), 1, 8, 20);
  const auto outputs = test::run_on_cpu(
      function, test::checkpoint_weights(checkpoint.component("unet"), unet_params(test::tiny_unet_config())),
      {cpu::test::random_tensor({1, 4, 8, 20}, 3), test::filled_tensor({1}, 250.0f),
       cpu::test::random_tensor({1, 77, 32}, 4)});
  EXPECT_EQ(outputs[0].type.shape, (Shape{1, 4, 8, 20}));
  test::expect_finite_and_varied(outputs[0], "tiny unet 8x20");
}

std::vector<cpu::CpuTensor> run_random_unet(const UNetConfig& config, std::int64_t height, std::int64_t width,
                                            std::int64_t tokens) {
  const graph::Function function = unet_graph(config, 2, height, width, tokens);
  const cpu::CpuTensor timesteps = test::filled_tensor({2}, 700.0f);
  return test::run_on_cpu(function, test::random_weights(unet_params(config), 5),
                          {cpu::test::random_tensor({2, config.in_channels, height, width}, 6), timesteps,
                           cpu::test::random_tensor({2, tokens, config.cross_attention_dim}, 7)});
}

TEST(UNetGraph, Sd2StyleConfigRunsOnNonSquareLatents) {
  const UNetConfig config = test::sd2_style_unet_config(true);
  const auto outputs = run_random_unet(config, 8, 12, 77);
  EXPECT_EQ(outputs[0].type.shape, (Shape{2, 4, 8, 12}));
  test::expect_finite_and_varied(outputs[0], "sd2-style unet");
}

// A Linear over channels and a 1x1 conv are the same map, and the random weights depend only on the
// name and the values' count: so the two projection layouts must agree, which checks the different
// reshape orders diffusers uses around each.
TEST(UNetGraph, LinearAndConvProjectionsAgree) {
  const auto linear = run_random_unet(test::sd2_style_unet_config(true), 8, 12, 9);
  const auto conv = run_random_unet(test::sd2_style_unet_config(false), 8, 12, 9);
  EXPECT_LT(cpu::test::relative_l2(*linear[0].f32, *conv[0].f32), 1e-5);
}

TEST(UNetGraph, TwoBlockConfigRuns) {
  const auto outputs = run_random_unet(test::two_block_unet_config(), 6, 10, 16);
  EXPECT_EQ(outputs[0].type.shape, (Shape{2, 4, 6, 10}));
  test::expect_finite_and_varied(outputs[0], "2-block unet");
}

TEST(UNetGraph, RefusesLatentsTheDownsamplersCannotHalve) {
  try {
    unet_graph(test::tiny_unet_config(), 1, 16, 18);
    FAIL() << "18 columns accepted by a 3-block UNet";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("16x18 is not divisible by 4"), std::string::npos) << error.what();
  }
  EXPECT_THROW(unet_graph(test::tiny_unet_config(), 0, 16, 16), Error);
}

}  // namespace
}  // namespace websd
