// bf16 attention (attribute compute = "bf16", what `--dtype bf16` compiles to) against a model of
// its arithmetic written out here (queries scaled by scale * log2(e), keys, values and the
// unnormalised probabilities 2^(s - shift) rounded to bf16, with the shift the largest score rounded
// up to an integer; products and sums in double) and against f32 attention: self-attention over
// several tasks with a partial last one and a partial last block of keys, cross-attention to 77
// tokens, a causal mask, odd widths, one wide head. On a CPU without AVX512-BF16 it is refused with
// one sentence.
#include "targets/cpu/runtime/bf16_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "cpu_test_util.h"
#include "targets/cpu/runtime/cpu_kernels.h"

namespace websd::cpu {
namespace {

struct Case {
  const char* name;
  std::int64_t heads, q_len, kv_len, dim, v_dim;
  bool causal;
};

float as_bf16(float value) { return bf16_to_f32(f32_to_bf16(value)); }

Attrs attention_attrs(const Case& c, const char* compute) {
  Attrs attrs;
  attrs.set("scale", 1.0 / std::sqrt(static_cast<double>(c.dim)));
  if (c.causal) attrs.set("causal", std::int64_t{1});
  if (*compute != '\0') attrs.set("compute", std::string(compute));
  return attrs;
}

// The attention op (what a graph node runs).
std::vector<float> attention(const Case& c, const CpuTensor& q, const CpuTensor& k, const CpuTensor& v,
                             const char* compute) {
  CpuTensor out = CpuTensor::allocate({DType::kF32, {1, c.heads, c.q_len, c.v_dim}});
  (*cpu_kernel_lookup("attention"))({&q, &k, &v}, attention_attrs(c, compute), out);
  return *out.f32;
}

// The fused bf16 kernel itself, which the op runs only where it pays.
std::vector<float> fused_bf16(const Case& c, const CpuTensor& q, const CpuTensor& k, const CpuTensor& v) {
  std::vector<float> out(static_cast<std::size_t>(c.heads * c.q_len * c.v_dim));
  attention_bf16({c.heads, c.q_len, c.kv_len, c.dim, c.v_dim}, static_cast<float>(1.0 / std::sqrt(c.dim * 1.0)),
                 c.causal, q.fdata(), k.fdata(), v.fdata(), out.data());
  return out;
}

// What the bf16 kernel computes, each rounding where it rounds, in double elsewhere. Its online
// softmax rescales by powers of two only, so every probability is the one rounded here with the
// final shift.
std::vector<float> modelled_bf16(const Case& c, const CpuTensor& q, const CpuTensor& k, const CpuTensor& v) {
  const float factor = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.dim))) * 1.44269504088896341f;
  std::vector<float> out(static_cast<std::size_t>(c.heads * c.q_len * c.v_dim));
  std::vector<double> scores(static_cast<std::size_t>(c.kv_len));
  for (std::int64_t h = 0; h < c.heads; ++h) {
    for (std::int64_t i = 0; i < c.q_len; ++i) {
      const std::int64_t visible = attention_visible_keys(c.causal, i, c.q_len, c.kv_len);
      for (std::int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (std::int64_t d = 0; d < c.dim; ++d) {
          dot += static_cast<double>(as_bf16((*q.f32)[(h * c.q_len + i) * c.dim + d] * factor)) *
                 as_bf16((*k.f32)[(h * c.kv_len + j) * c.dim + d]);
        }
        scores[j] = static_cast<float>(dot);  // the kernel's scores are f32
      }
      const auto shift = static_cast<float>(std::ceil(*std::max_element(scores.begin(), scores.begin() + visible)));
      double sum = 0;
      std::vector<double> weighted(static_cast<std::size_t>(c.v_dim), 0.0);
      for (std::int64_t j = 0; j < visible; ++j) {
        // The kernel subtracts in f32: its exponent's rounding moves a probability across a bf16
        // rounding boundary more often than anything else does.
        const double p = std::exp2(static_cast<double>(static_cast<float>(scores[j]) - shift));
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

// The largest relative L2 difference of one output row (one query of one head).
double worst_row(const Case& c, const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::int64_t row = 0; row < c.heads * c.q_len; ++row) {
    const auto begin = static_cast<std::size_t>(row * c.v_dim), end = begin + static_cast<std::size_t>(c.v_dim);
    worst = std::max(worst, test::relative_l2(std::vector<float>(got.begin() + begin, got.begin() + end),
                                              std::vector<float>(want.begin() + begin, want.begin() + end)));
  }
  return worst;
}

class Bf16Attention : public ::testing::TestWithParam<Case> {};

TEST_P(Bf16Attention, MatchesItsArithmeticAndF32OrIsRefused) {
  const Case& c = GetParam();
  const CpuTensor q = test::random_tensor({1, c.heads, c.q_len, c.dim}, 1, 2.0f);
  const CpuTensor k = test::random_tensor({1, c.heads, c.kv_len, c.dim}, 2, 2.0f);
  const CpuTensor v = test::random_tensor({1, c.heads, c.kv_len, c.v_dim}, 3);
  if (!bf16_attention_available()) {
    try {
      attention(c, q, k, v, "bf16");
      FAIL() << "a bf16 attention ran on a CPU without native bf16";
    } catch (const Error& error) {
      EXPECT_NE(error.message().find("no native bf16 (AVX512-BF16 or AMX)"), std::string::npos) << error.message();
    }
    return;
  }
  const std::vector<float> got = fused_bf16(c, q, k, v);
  // Against the model only the f32 rounding of scores and exponentials differs; now and then it
  // moves a probability across a bf16 rounding boundary (2^-8 of it), which a row dominated by that
  // key shows as up to about 4e-3. A wrong mask, shift or rescale is off by far more, in every row it
  // touches.
  const std::vector<float> modelled = modelled_bf16(c, q, k, v);
  EXPECT_LT(test::relative_l2(got, modelled), 2e-4) << c.name;
  EXPECT_LT(worst_row(c, got, modelled), 1e-2) << c.name;
  // bf16's rounding itself: 8 bits of mantissa, about 2^-9 relative per operand.
  const std::vector<float> f32 = attention(c, q, k, v, "f32");
  EXPECT_LT(test::relative_l2(got, f32), 1e-2) << c.name;
  // A node computing in bf16 runs the fused kernel where it is faster than f32 attention, else f32.
  EXPECT_EQ(attention(c, q, k, v, "bf16"), bf16_attention_pays() ? got : f32) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Bf16Attention,
    ::testing::Values(Case{"self", 4, 300, 300, 40, 40, false}, Case{"cross_77", 3, 96, 77, 80, 80, false},
                      Case{"causal", 2, 77, 77, 64, 64, true}, Case{"causal_fewer_queries", 2, 30, 200, 16, 16, true},
                      Case{"odd_widths", 2, 50, 70, 33, 21, false}, Case{"wide_head", 1, 128, 128, 512, 512, false}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(Bf16Attention, TheWorkspaceIsThePackedKeysAndValuesAndSmallRowBuffers) {
  // SD 1.5's first UNet level, batch 2: 8 heads of 40 over 4096 tokens. Keys and values are packed
  // as bf16 (widths padded to 48 for the values); each thread's rows need a few KiB.
  const AttentionSizes unet{16, 4096, 4096, 40, 40};
  const std::uint64_t packed = 16ull * 4096 * (40 + 48) * 2;
  EXPECT_GE(attention_bf16_workspace_bytes(unet), packed);
  EXPECT_LE(attention_bf16_workspace_bytes(unet), packed + 64ull * 64 * 1024);
}

}  // namespace
}  // namespace websd::cpu
