// bf16 attention (attribute compute = "bf16", what `--dtype bf16` compiles to) against a model of
// its arithmetic written out here (scaled queries, keys, values and the unnormalised probabilities
// rounded to bf16, products and sums in double) and against f32 attention; self-attention over
// several query blocks with a partial last one (the blocks spread over the threads), cross-attention
// to 77 tokens, a causal mask, one wide head. On a CPU without native bf16 it is refused with one
// sentence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "cpu_test_util.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_attention.h"

namespace websd::cpu {
namespace {

struct Case {
  const char* name;
  std::int64_t heads, q_len, kv_len, dim, v_dim;
  bool causal;
  std::int64_t block_rows;  // 0: the default
};

float as_bf16(float value) { return bf16_to_f32(f32_to_bf16(value)); }

Attrs attention_attrs(const Case& c, const char* compute) {
  Attrs attrs;
  attrs.set("scale", 1.0 / std::sqrt(static_cast<double>(c.dim)));
  if (c.causal) attrs.set("causal", std::int64_t{1});
  if (c.block_rows > 0) attrs.set("block_rows", c.block_rows);
  if (*compute != '\0') attrs.set("compute", std::string(compute));
  return attrs;
}

std::vector<float> attention(const Case& c, const CpuTensor& q, const CpuTensor& k, const CpuTensor& v,
                             const char* compute) {
  CpuTensor out = CpuTensor::allocate({DType::kF32, {1, c.heads, c.q_len, c.v_dim}});
  (*cpu_kernel_lookup("attention"))({&q, &k, &v}, attention_attrs(c, compute), out);
  return *out.f32;
}

// What the bf16 kernel computes, each rounding where it rounds, in double elsewhere.
std::vector<float> modelled_bf16(const Case& c, const CpuTensor& q, const CpuTensor& k, const CpuTensor& v) {
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.dim)));
  std::vector<float> out(static_cast<std::size_t>(c.heads * c.q_len * c.v_dim));
  std::vector<double> scores(static_cast<std::size_t>(c.kv_len));
  for (std::int64_t h = 0; h < c.heads; ++h) {
    for (std::int64_t i = 0; i < c.q_len; ++i) {
      const std::int64_t visible = attention_visible_keys(c.causal, i, c.q_len, c.kv_len);
      for (std::int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (std::int64_t d = 0; d < c.dim; ++d) {
          dot += static_cast<double>(as_bf16((*q.f32)[(h * c.q_len + i) * c.dim + d] * scale)) *
                 as_bf16((*k.f32)[(h * c.kv_len + j) * c.dim + d]);
        }
        scores[j] = static_cast<float>(dot);  // the kernel's scores are f32
      }
      const double top = *std::max_element(scores.begin(), scores.begin() + visible);
      double sum = 0;
      std::vector<double> weighted(static_cast<std::size_t>(c.v_dim), 0.0);
      for (std::int64_t j = 0; j < visible; ++j) {
        const double p = std::exp(scores[j] - top);
        sum += p;
        for (std::int64_t d = 0; d < c.v_dim; ++d) {
          weighted[d] +=
              static_cast<double>(as_bf16(static_cast<float>(p))) * as_bf16((*v.f32)[(h * c.kv_len + j) * c.v_dim + d]);
        }
      }
      for (std::int64_t d = 0; d < c.v_dim; ++d) {
        out[(h * c.q_len + i) * c.v_dim + d] = static_cast<float>(weighted[d] / sum);
      }
    }
  }
  return out;
}

class Bf16Attention : public ::testing::TestWithParam<Case> {};

TEST_P(Bf16Attention, MatchesItsArithmeticAndF32OrIsRefused) {
  const Case& c = GetParam();
  const CpuTensor q = test::random_tensor({1, c.heads, c.q_len, c.dim}, 1, 2.0f);
  const CpuTensor k = test::random_tensor({1, c.heads, c.kv_len, c.dim}, 2, 2.0f);
  const CpuTensor v = test::random_tensor({1, c.heads, c.kv_len, c.v_dim}, 3);
  if (!onednn_bf16_available()) {
    try {
      attention(c, q, k, v, "bf16");
      FAIL() << "a bf16 attention ran on a CPU without native bf16";
    } catch (const Error& error) {
      EXPECT_NE(error.message().find("no native bf16 (AVX512-BF16 or AMX)"), std::string::npos) << error.message();
    }
    return;
  }
  const std::vector<float> got = attention(c, q, k, v, "bf16");
  // Summation order and the kernels' exp polynomial against double.
  EXPECT_LT(test::relative_l2(got, modelled_bf16(c, q, k, v)), 1e-4) << c.name;
  // bf16's rounding itself: 8 bits of mantissa, about 2^-9 relative per operand.
  EXPECT_LT(test::relative_l2(got, attention(c, q, k, v, "f32")), 1e-2) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16Attention,
                         ::testing::Values(Case{"self_blocks", 4, 300, 300, 40, 40, false, 64},
                                           Case{"self_default_blocks", 4, 300, 300, 40, 40, false, 0},
                                           Case{"cross_77", 3, 96, 77, 80, 80, false, 0},
                                           Case{"causal", 2, 77, 77, 64, 64, true, 20},
                                           Case{"wide_head", 1, 128, 128, 512, 512, false, 0}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(Bf16Attention, TheWorkspaceCountsTheNarrowedOperandsAndABlockOrIsRefused) {
  const AttentionSizes unet{16, 4096, 4096, 40, 40};
  if (!onednn_bf16_available()) {
    EXPECT_THROW(attention_bf16_workspace_bytes(unet, 128), Error);
    return;
  }
  const std::uint64_t narrowed_keys_and_values = 16ull * 4096 * 80 * 2;
  const std::uint64_t one_threads_scores_and_probabilities = 128ull * 4096 * (4 + 2);
  EXPECT_GE(attention_bf16_workspace_bytes(unet, 128), narrowed_keys_and_values + one_threads_scores_and_probabilities);
}

}  // namespace
}  // namespace websd::cpu
