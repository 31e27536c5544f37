// bf16 3x3 convolutions over many pixels run as Winograd F(2x2, 3x3) (onednn_conv.cpp,
// winograd_transforms.h). On operands whose transforms bf16 holds exactly (small integers, and
// weights in quarters) the result must equal direct convolution's up to f32 rounding, which checks
// every transform, the tiles half outside an odd-sized image, bias and accumulation, and chunks of
// tiles (the last one partly padding). On random operands it must stay within bf16's rounding.
// f32 ones take the same transforms where oneDNN has no Winograd kernel (without AVX-512; on an
// AVX-512 machine the ctest entry winograd_f32_without_avx512 runs them with ONEDNN_MAX_CPU_ISA=AVX2).
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cpu_test_util.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/onednn_conv.h"

namespace websd::cpu {
namespace {

ConvGeometry same_3x3(const Shape& x, std::int64_t out_channels, bool accumulate, bool bf16) {
  return ConvGeometry{
      x, {out_channels, x[3], 3, 3}, {x[0], x[1], x[2], out_channels}, 1, 1, true, accumulate, ConvLayout::kNhwc, bf16};
}

// The convolution with its weight packed as the kernel reads it, or given plain (OIHW f32).
std::vector<float> run(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& bias, std::vector<float> y, bool packed = true) {
  if (packed) return test::conv_with_packed_weight(g, x, w, bias, std::move(y));
  onednn_conv2d(g, x.data(), w.data(), false, bias.data(), y.data());
  return y;
}

// Values k * step for k in [-range, range], a fixed pseudo-random sequence.
std::vector<float> steps(std::size_t count, int range, float step, unsigned seed) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    values[i] = static_cast<float>(static_cast<int>(seed >> 8) % (2 * range + 1) - range) * step;
  }
  return values;
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double most = 0;
  for (std::size_t i = 0; i < a.size(); ++i) most = std::max(most, std::fabs(static_cast<double>(a[i]) - b[i]));
  return most;
}

struct Case {
  const char* name;
  Shape x;  // NHWC
  std::int64_t out_channels;
  bool accumulate;
};

void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class WinogradBf16 : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!onednn_bf16_available()) GTEST_SKIP() << "bf16 convolutions need native bf16 (AVX512-BF16 or AMX)";
  }
};

TEST_P(WinogradBf16, EqualsDirectConvolutionWhereBf16IsExact) {
  const Case& c = GetParam();
  const ConvGeometry bf16 = same_3x3(c.x, c.out_channels, c.accumulate, true);
  const ConvGeometry f32 = same_3x3(c.x, c.out_channels, c.accumulate, false);
  ASSERT_EQ(conv_weight_layout(bf16).rfind("onednn-winograd2x3-bf16:", 0), 0u) << conv_weight_layout(bf16);
  EXPECT_TRUE(conv_layout_reads_bf16(conv_weight_layout(bf16)));

  const auto count = [](const Shape& s) { return static_cast<std::size_t>(shape_numel(s)); };
  const std::vector<float> x = steps(count(bf16.x), 2, 1.0f, 1);
  const std::vector<float> w = steps(count(bf16.w), 4, 0.25f, 2);
  const std::vector<float> bias = steps(static_cast<std::size_t>(c.out_channels), 8, 0.5f, 3);
  const std::vector<float> residual =
      c.accumulate ? steps(count(bf16.y), 8, 1.0f, 4) : std::vector<float>(count(bf16.y));

  const std::vector<float> direct = run(f32, x, w, bias, residual);
  const std::vector<float> winograd = run(bf16, x, w, bias, residual);
  // Every product and sum is exact in f32 here but for order: within a few ulps of values below 2^11.
  EXPECT_LT(max_abs_difference(winograd, direct), 1e-3) << c.name;
  EXPECT_EQ(run(bf16, x, w, bias, residual, false), winograd) << "plain weights transformed per call";
}

TEST_P(WinogradBf16, StaysWithinBf16RoundingOnRandomOperands) {
  const Case& c = GetParam();
  const ConvGeometry bf16 = same_3x3(c.x, c.out_channels, c.accumulate, true);
  const ConvGeometry f32 = same_3x3(c.x, c.out_channels, c.accumulate, false);
  const std::vector<float> x = *test::random_tensor(bf16.x, 1).f32;
  const std::vector<float> w = *test::random_tensor(bf16.w, 2, 0.1f).f32;
  const std::vector<float> bias = *test::random_tensor({c.out_channels}, 3).f32;
  const std::vector<float> residual = *test::random_tensor(bf16.y, 4).f32;
  ConvGeometry direct = bf16;
  direct.allow_winograd = false;
  ASSERT_EQ(conv_weight_layout(direct).find("winograd"), std::string::npos);
  const std::vector<float> exact = run(f32, x, w, bias, residual);
  // Winograd rounds its transformed operands to bf16 as direct convolution rounds the plain ones:
  // its error against f32 stays of the same size as direct bf16 convolution's.
  const double winograd_error = test::relative_l2(run(bf16, x, w, bias, residual), exact);
  const double direct_error = test::relative_l2(run(direct, x, w, bias, residual), exact);
  EXPECT_LT(winograd_error, 1e-2) << c.name;
  EXPECT_LT(winograd_error, 2 * direct_error) << c.name << ": direct bf16 " << direct_error;
}

INSTANTIATE_TEST_SUITE_P(Geometries, WinogradBf16,
                         ::testing::Values(Case{"odd_height_and_width", {1, 63, 67, 80}, 72, false},
                                           Case{"residual_accumulated", {1, 64, 64, 64}, 96, true},
                                           // 2 x 38 x 38 = 2888 tiles of 64 channels: with 8 MB chunks three of 963
                                           // tiles, the last with a padding tile.
                                           Case{"several_chunks", {2, 75, 75, 64}, 64, false}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// f32 through websd's transforms, or a skip where oneDNN's own Winograd takes f32 convolutions.
class WinogradF32 : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const std::string layout = conv_weight_layout(same_3x3({1, 64, 64, 64}, 64, false, false));
    if (!layout.starts_with("onednn-winograd2x3:")) {
      GTEST_SKIP() << "oneDNN has its own f32 Winograd on this CPU (layout " << layout.substr(0, layout.find(':'))
                   << "): winograd_f32_without_avx512 runs these with ONEDNN_MAX_CPU_ISA=AVX2";
    }
  }
};

TEST_P(WinogradF32, MatchesDirectConvolution) {
  const Case& c = GetParam();
  const ConvGeometry winograd = same_3x3(c.x, c.out_channels, c.accumulate, false);
  ConvGeometry direct = winograd;
  direct.allow_winograd = false;
  ASSERT_EQ(conv_weight_layout(winograd).rfind("onednn-winograd2x3:", 0), 0u) << conv_weight_layout(winograd);
  ASSERT_EQ(conv_weight_layout(direct).find("winograd"), std::string::npos) << conv_weight_layout(direct);
  EXPECT_FALSE(conv_layout_reads_bf16(conv_weight_layout(winograd)));

  const std::vector<float> x = *test::random_tensor(winograd.x, 1).f32;
  const std::vector<float> w = *test::random_tensor(winograd.w, 2, 0.1f).f32;
  const std::vector<float> bias = *test::random_tensor({c.out_channels}, 3).f32;
  const std::vector<float> residual =
      c.accumulate ? *test::random_tensor(winograd.y, 4).f32 : std::vector<float>(shape_numel(winograd.y));
  const std::vector<float> expected = run(direct, x, w, bias, residual);
  const std::vector<float> actual = run(winograd, x, w, bias, residual);
  // F(2x2, 3x3)'s transforms add and halve: its error in f32 stays near direct convolution's order
  // of summation (oneDNN's own F(4x4, 3x3) measured 2e-6 to 1.5e-5 here).
  EXPECT_LT(test::relative_l2(actual, expected), 1e-5) << c.name;
  EXPECT_EQ(run(winograd, x, w, bias, residual, false), actual) << "plain weights transformed per call";
}

INSTANTIATE_TEST_SUITE_P(Geometries, WinogradF32,
                         ::testing::Values(Case{"odd_height_and_width", {1, 63, 67, 80}, 72, false},
                                           Case{"residual_accumulated", {1, 64, 64, 64}, 96, true},
                                           // 2888 tiles again: with f32 input three chunks of 963 as well.
                                           Case{"several_chunks", {2, 75, 75, 64}, 64, false}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(WinogradBf16Choice, FewPixelsOrChannelsStayDirect) {
  if (!onednn_bf16_available()) GTEST_SKIP() << "bf16 convolutions need native bf16 (AVX512-BF16 or AMX)";
  const auto winograd = [](const ConvGeometry& g) {
    return conv_weight_layout(g).find("winograd") != std::string::npos;
  };
  EXPECT_TRUE(winograd(same_3x3({1, 64, 64, 320}, 320, false, true)));
  EXPECT_TRUE(winograd(same_3x3({2, 32, 32, 1920}, 640, false, true)));
  EXPECT_FALSE(winograd(same_3x3({2, 32, 32, 640}, 640, false, true)));
  EXPECT_FALSE(winograd(same_3x3({2, 16, 16, 320}, 320, false, true)));
  EXPECT_FALSE(winograd(same_3x3({1, 64, 64, 4}, 320, false, true)));
  EXPECT_FALSE(winograd(same_3x3({1, 64, 64, 320}, 320, false, false)));
}

}  // namespace
}  // namespace websd::cpu
