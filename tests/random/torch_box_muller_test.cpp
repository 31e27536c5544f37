// The cephes float log and sincos that torch's AVX2 kernel uses: they must be accurate approximations
// (a transcription error shows up as a large error here, before any parity test is read), and
// Box-Muller must place cos in the first half of a chunk and sin in the second.
#include "pipeline/random/torch_box_muller.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>

namespace websd {
namespace {

TEST(TorchAvx2Math, LogIsAccurateOnTheUniformRange) {
  EXPECT_EQ(torch_avx2_log(1.0f), 0.0f);
  double worst = 0.0;
  // Every 2^-24 step that torch's uniforms can produce, 1 - u in (0, 1], sampled with a stride.
  for (std::uint32_t k = 1; k <= (1u << 24); k += 97) {
    const float x = static_cast<float>(k) * std::ldexp(1.0f, -24);
    const double exact = std::log(static_cast<double>(x));
    const double error = std::abs(torch_avx2_log(x) - exact) / std::max(std::abs(exact), 1e-30);
    worst = std::max(worst, error);
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_TRUE(std::isnan(torch_avx2_log(0.0f)));
  EXPECT_TRUE(std::isnan(torch_avx2_log(-1.0f)));
}

TEST(TorchAvx2Math, SinCosAreAccurateOnOneTurn) {
  double worst = 0.0;
  for (int k = 0; k < 100000; ++k) {
    const float x = static_cast<float>(k) * 6.2831853f / 100000.0f;
    const SinCos value = torch_avx2_sincos(x);
    worst = std::max(worst, std::abs(value.sin - std::sin(static_cast<double>(x))));
    worst = std::max(worst, std::abs(value.cos - std::cos(static_cast<double>(x))));
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(torch_avx2_sincos(0.0f).cos, 1.0f);
  EXPECT_EQ(torch_avx2_sincos(0.0f).sin, 0.0f);
}

TEST(TorchAvx2Math, BoxMullerPairsElementWithElementPlusEight) {
  std::array<float, 16> values{};
  values.fill(0.5f);
  values[3] = 1.0f - std::exp(-0.5f);  // radius sqrt(-2 log(exp(-0.5))) = 1
  values[11] = 0.25f;                  // angle pi / 2: cos 0, sin 1
  torch_box_muller_16(values);
  EXPECT_NEAR(values[3], 0.0f, 1e-6f);
  EXPECT_NEAR(values[11], 1.0f, 1e-6f);
  // u1 = 0.5, u2 = 0.5: radius sqrt(2 log 2), angle pi.
  EXPECT_NEAR(values[0], -std::sqrt(2.0f * std::log(2.0f)), 1e-6f);
  EXPECT_NEAR(values[8], 0.0f, 1e-6f);
}

}  // namespace
}  // namespace websd
