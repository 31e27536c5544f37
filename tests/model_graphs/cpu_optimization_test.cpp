// The CPU target's layout and fusion passes (channels_last, fuse_conv_residual,
// fuse_norm_activation) change no result: every network runs with them and without them, on
// configurations of our own with random weights, non-square sizes included.
#include <gtest/gtest.h>

#include "targets/cpu/reference/cpu_executor.h"
#include "targets/cpu/runtime/cpu_test_util.h"
#include "graph_test_support.h"
#include "models/graphs/sd_graphs.h"
#include "models/model_params.h"

namespace websd {
namespace {

void expect_same_with_and_without_passes(const graph::Function& function, const cpu::WeightSource& weights,
                                         const std::vector<cpu::CpuTensor>& inputs) {
  cpu::CpuExecutor optimized(function, true);
  cpu::CpuExecutor reference(function, false);
  optimized.bind_weights(weights);
  reference.bind_weights(weights);
  const auto expected = reference.run(inputs);
  for (int run = 0; run < 2; ++run) {  // the second run reuses pooled buffers
    const auto actual = optimized.run(inputs);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      ASSERT_EQ(actual[i].type, expected[i].type);
      EXPECT_LT(cpu::test::relative_l2(*actual[i].f32, *expected[i].f32), 1e-5) << function.symbol() << " output " << i;
    }
  }
}

TEST(CpuOptimization, UNetsMatchTheUnoptimizedGraph) {
  for (const UNetConfig& config :
       {test::sd2_style_unet_config(true), test::sd2_style_unet_config(false), test::two_block_unet_config()}) {
    const graph::Function function = unet_graph(config, 2, 8, 12, 5);
    expect_same_with_and_without_passes(
        function, test::random_weights(unet_params(config), 7),
        {cpu::test::random_tensor({2, config.in_channels, 8, 12}, 1), test::filled_tensor({2}, 321.0f),
         cpu::test::random_tensor({2, 5, config.cross_attention_dim}, 2)});
  }
}

TEST(CpuOptimization, VaeDecodersAndEncodersMatchTheUnoptimizedGraph) {
  for (const VaeConfig& config :
       {test::tiny_vae_config(), test::three_level_vae_config(), test::plain_two_level_vae_config()}) {
    const auto weights = test::random_weights(vae_params(config), 3);
    expect_same_with_and_without_passes(vae_decode_graph(config, 1, 6, 10), weights,
                                        {cpu::test::random_tensor({1, config.latent_channels, 6, 10}, 4)});
    const std::int64_t scale = std::int64_t{1} << (config.block_count() - 1);
    expect_same_with_and_without_passes(vae_encode_graph(config, 1, 6 * scale, 10 * scale), weights,
                                        {cpu::test::random_tensor({1, 3, 6 * scale, 10 * scale}, 5)});
  }
}

}  // namespace
}  // namespace websd
