// The layer helpers' data layout on small non-square inputs, against loops written from the PyTorch
// definitions.
#include "models/graphs/layers.h"

#include <gtest/gtest.h>

#include <cmath>

#include "targets/cpu/runtime/cpu_test_util.h"
#include "graph_test_support.h"

namespace websd {
namespace {

using graph::Function;
using graph::FunctionBuilder;

TEST(Layers, PixelsBecomeChannelsLastTokensAndBack) {
  constexpr std::int64_t kBatch = 2, kChannels = 3, kHeight = 4, kWidth = 5;
  Function function("f");
  FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {kBatch, kChannels, kHeight, kWidth}});
  const auto tokens = layers::pixels_to_tokens(b, x);
  function.set_outputs({tokens, layers::tokens_to_pixels(b, tokens, kHeight, kWidth)});
  const cpu::CpuTensor input = cpu::test::random_tensor({kBatch, kChannels, kHeight, kWidth}, 1);
  const auto outputs = test::run_on_cpu(function, nullptr, {input});
  ASSERT_EQ(outputs[0].type.shape, (Shape{kBatch, kHeight * kWidth, kChannels}));
  const auto& in = *input.f32;
  const auto& out = *outputs[0].f32;
  for (std::int64_t n = 0; n < kBatch; ++n) {
    for (std::int64_t c = 0; c < kChannels; ++c) {
      for (std::int64_t y = 0; y < kHeight; ++y) {
        for (std::int64_t col = 0; col < kWidth; ++col) {
          const float pixel = in[((n * kChannels + c) * kHeight + y) * kWidth + col];
          ASSERT_EQ(out[(n * kHeight * kWidth + y * kWidth + col) * kChannels + c], pixel);
        }
      }
    }
  }
  EXPECT_EQ(*outputs[1].f32, in);
}

// softmax(q_h k_h^T / sqrt(d)) v_h per batch row and head h, heads being consecutive slices of width d.
std::vector<double> reference_attention(const std::vector<float>& q, const std::vector<float>& k,
                                        const std::vector<float>& v, std::int64_t batch, std::int64_t q_len,
                                        std::int64_t kv_len, std::int64_t heads, std::int64_t head_dim, bool causal) {
  const std::int64_t width = heads * head_dim;
  std::vector<double> out(static_cast<std::size_t>(batch * q_len * width), 0.0);
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < q_len; ++i) {
        std::vector<double> weights(kv_len, 0.0);
        double total = 0;
        for (std::int64_t j = 0; j < kv_len && (!causal || j <= i); ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < head_dim; ++d) {
            dot += q[(n * q_len + i) * width + h * head_dim + d] *
                   static_cast<double>(k[(n * kv_len + j) * width + h * head_dim + d]);
          }
          total += weights[j] = std::exp(dot / std::sqrt(static_cast<double>(head_dim)));
        }
        for (std::int64_t j = 0; j < kv_len; ++j) {
          for (std::int64_t d = 0; d < head_dim; ++d) {
            out[(n * q_len + i) * width + h * head_dim + d] +=
                weights[j] / total * v[(n * kv_len + j) * width + h * head_dim + d];
          }
        }
      }
    }
  }
  return out;
}

TEST(Layers, MultiHeadAttentionSplitsHeadsAlongTheWidth) {
  constexpr std::int64_t kBatch = 2, kQueries = 5, kKeys = 7, kHeads = 3, kHeadDim = 4;
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal);
    const std::int64_t keys = causal ? kQueries : kKeys;
    Function function("f");
    FunctionBuilder b(function);
    const auto q = b.input("q", {DType::kF32, {kBatch, kQueries, kHeads * kHeadDim}});
    const auto k = b.input("k", {DType::kF32, {kBatch, keys, kHeads * kHeadDim}});
    const auto v = b.input("v", {DType::kF32, {kBatch, keys, kHeads * kHeadDim}});
    function.set_outputs({layers::multi_head_attention(b, q, k, v, kHeads, causal)});
    const auto tq = cpu::test::random_tensor({kBatch, kQueries, kHeads * kHeadDim}, 2);
    const auto tk = cpu::test::random_tensor({kBatch, keys, kHeads * kHeadDim}, 3);
    const auto tv = cpu::test::random_tensor({kBatch, keys, kHeads * kHeadDim}, 4);
    const auto outputs = test::run_on_cpu(function, nullptr, {tq, tk, tv});
    ASSERT_EQ(outputs[0].type.shape, (Shape{kBatch, kQueries, kHeads * kHeadDim}));
    const auto expected =
        reference_attention(*tq.f32, *tk.f32, *tv.f32, kBatch, kQueries, keys, kHeads, kHeadDim, causal);
    const std::vector<float> expected_f32(expected.begin(), expected.end());
    EXPECT_LT(cpu::test::relative_l2(*outputs[0].f32, expected_f32), 1e-6);
  }
}

TEST(Layers, LinearAndConvDeclareCheckpointShapedWeights) {
  Function function("f");
  FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {1, 6, 4, 4}});
  const auto scope = b.scope("block");
  const auto y = layers::conv2d(b, "conv", x, 8, 3, 2, 1);
  function.set_outputs({layers::linear(b, "proj", layers::pixels_to_tokens(b, y), 5, false)});
  EXPECT_EQ(test::sorted_weight_specs(function),
            (std::vector<ParamSpec>{
                {"block.conv.bias", {8}}, {"block.conv.weight", {8, 6, 3, 3}}, {"block.proj.weight", {5, 8}}}));
  EXPECT_EQ(function.value(function.outputs()[0]).type.shape, (Shape{1, 4, 5}));
}

}  // namespace
}  // namespace websd
