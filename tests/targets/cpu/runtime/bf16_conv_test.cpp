// bf16 convolutions (ConvGeometry::bf16, what `--dtype bf16` compiles to) against f32 ones on
// bf16-rounded operands: the same products, summed in f32, so they agree to summation order. Each
// of oneDNN's paths is covered: direct (brgconv), strided, with a residual accumulated, and as a
// matmul over the pixels (pointwise, and over im2col rows). On a CPU without native bf16 the same
// geometries must be refused with one sentence.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "cpu_test_util.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/onednn_conv.h"

namespace websd::cpu {
namespace {

struct Case {
  const char* name;
  Shape x, w;  // NHWC input, OIHW weight
  std::int64_t stride, padding;
  bool accumulate;
};

ConvGeometry geometry_of(const Case& c, bool bf16) {
  const std::int64_t h = (c.x[1] + 2 * c.padding - c.w[2]) / c.stride + 1;
  const std::int64_t w = (c.x[2] + 2 * c.padding - c.w[3]) / c.stride + 1;
  return ConvGeometry{c.x,  c.w,          {c.x[0], h, w, c.w[0]}, c.stride, c.padding,
                      true, c.accumulate, ConvLayout::kNhwc,      bf16};
}

std::vector<float> rounded_to_bf16(const std::vector<float>& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = bf16_to_f32(f32_to_bf16(values[i]));
  return out;
}

std::vector<float> run(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& bias, const std::vector<float>& residual) {
  return test::conv_with_packed_weight(
      g, x, w, bias, g.accumulate ? residual : std::vector<float>(static_cast<std::size_t>(shape_numel(g.y))));
}

class Bf16Conv : public ::testing::TestWithParam<Case> {};

TEST_P(Bf16Conv, MatchesF32OnRoundedOperandsOrIsRefused) {
  const Case& c = GetParam();
  const ConvGeometry bf16 = geometry_of(c, true);
  if (!onednn_bf16_available()) {
    try {
      conv_weight_layout(bf16);
      FAIL() << "a bf16 convolution was planned on a CPU without native bf16";
    } catch (const Error& error) {
      EXPECT_NE(error.message().find("no native bf16 (AVX512-BF16 or AMX)"), std::string::npos) << error.message();
    }
    return;
  }
  const ConvGeometry f32 = geometry_of(c, false);
  const std::vector<float> x = *test::random_tensor(c.x, 1).f32;
  const std::vector<float> w = *test::random_tensor(c.w, 2, 0.1f).f32;
  const std::vector<float> bias = *test::random_tensor({c.w[0]}, 3).f32;
  const std::vector<float> residual = *test::random_tensor(bf16.y, 4).f32;
  EXPECT_TRUE(conv_layout_reads_bf16(conv_weight_layout(bf16)));
  EXPECT_FALSE(conv_layout_reads_bf16(conv_weight_layout(f32)));
  EXPECT_LT(conv_packed_weight_bytes(bf16), conv_packed_weight_bytes(f32));

  const std::vector<float> got = run(bf16, x, w, bias, residual);
  const std::vector<float> same_products = run(f32, rounded_to_bf16(x), rounded_to_bf16(w), bias, residual);
  const std::vector<float> exact = run(f32, x, w, bias, residual);
  EXPECT_LT(test::relative_l2(got, same_products), 1e-5) << c.name;
  // bf16's rounding itself: 8 bits of mantissa, about 2^-9 relative per operand.
  EXPECT_LT(test::relative_l2(got, exact), 1e-2) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Paths, Bf16Conv,
                         ::testing::Values(Case{"direct", {2, 12, 12, 32}, {48, 32, 3, 3}, 1, 1, false},
                                           Case{"strided", {1, 16, 16, 32}, {32, 32, 3, 3}, 2, 1, false},
                                           Case{"residual", {1, 32, 32, 16}, {16, 16, 3, 3}, 1, 1, true},
                                           Case{"pointwise_matmul", {2, 16, 16, 64}, {32, 64, 1, 1}, 1, 0, false},
                                           Case{"im2col_matmul", {2, 16, 16, 32}, {64, 32, 3, 3}, 1, 1, false}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(Bf16ConvLayout, OnlyOneDnnLayoutsMarkedBf16ReadBf16) {
  EXPECT_TRUE(conv_layout_reads_bf16("onednn-bf16:64/576:1/1"));
  EXPECT_TRUE(conv_layout_reads_bf16("onednn-gemm-bf16:288/64:64/1"));
  EXPECT_FALSE(conv_layout_reads_bf16("onednn:64/576:1/1"));
  EXPECT_FALSE(conv_layout_reads_bf16("onednn-gemm:288/64:64/1"));
  EXPECT_FALSE(conv_layout_reads_bf16("onednn:16x1-bf16"));
  EXPECT_FALSE(conv_layout_reads_bf16(""));
}

}  // namespace
}  // namespace websd::cpu
