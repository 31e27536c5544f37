// The CPU kernels' vector math (vector_math.h) against <cmath> in double precision: exp, SiLU,
// QuickGELU and GELU (and GEGLU's gate) within the polynomials' bounds over the range the networks
// reach, exp's limits, the softmax helpers, and every tail length of the 8- and 16-lane loops
// (each lane's result independent of how many others there are). Holds for every build: the
// AVX-512 and AVX2 polynomials and the <cmath> fallback.
#include "targets/cpu/runtime/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace websd::cpu {
namespace {

std::vector<float> span(float from, float to, int count) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) values[static_cast<std::size_t>(i)] = from + (to - from) * i / (count - 1);
  return values;
}

using MapFn = void (*)(const float*, float*, std::int64_t);

std::vector<float> mapped(MapFn fn, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  return y;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(VectorMath, ExpIsWithinAFewUlpOverFloatsFiniteRange) {
  const std::vector<float> x = span(-87.0f, 88.0f, 20001);
  const std::vector<float> y = mapped(exp_map, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double expected = std::exp(static_cast<double>(x[i]));
    ASSERT_NEAR(y[i], expected, 4e-7 * expected) << "exp(" << x[i] << ")";
  }
}

TEST(VectorMath, ExpUnderflowsToZeroAndOverflowsToInfinity) {
  const std::vector<float> y =
      mapped(exp_map, {-1000.0f, -104.0f, 89.0f, 1000.0f, -std::numeric_limits<float>::infinity(),
                       std::numeric_limits<float>::infinity(), 0.0f});
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(y[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_EQ(y[5], std::numeric_limits<float>::infinity());
  EXPECT_EQ(y[6], 1.0f);
}

TEST(VectorMath, SiluAndQuickGeluFollowTheSigmoid) {
  const std::vector<float> x = span(-30.0f, 30.0f, 6001);
  const std::vector<float> silu = mapped(silu_map, x);
  const std::vector<float> quick = mapped(quick_gelu_map, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    ASSERT_NEAR(silu[i], v * sigmoid(v), 1e-6 * std::max(1.0, std::abs(v))) << "silu(" << v << ")";
    ASSERT_NEAR(quick[i], v * sigmoid(1.702 * v), 1e-6 * std::max(1.0, std::abs(v))) << "quick_gelu(" << v << ")";
  }
}

TEST(VectorMath, GeluIsWithinTheErfApproximationsBound) {
  const std::vector<float> x = span(-12.0f, 12.0f, 4801);
  const std::vector<float> gelu = mapped(gelu_map, x);
  std::vector<float> ones(x.size(), 1.0f), gated(x.size());
  gelu_gate_map(ones.data(), x.data(), gated.data(), static_cast<std::int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double expected = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    // erf to 1.5e-7 absolute (Abramowitz & Stegun 7.1.26), scaled by x / 2, plus float rounding.
    ASSERT_NEAR(gelu[i], expected, 1e-7 * std::abs(v) + 2e-7 * std::max(1.0, std::abs(expected))) << v;
    ASSERT_NEAR(gated[i], expected, 1e-7 * std::abs(v) + 2e-7 * std::max(1.0, std::abs(expected))) << v;
  }
}

TEST(VectorMath, SoftmaxHelpersSumAndFindTheMaximumAtEveryLength) {
  for (std::int64_t count = 1; count <= 40; ++count) {
    std::vector<float> x(static_cast<std::size_t>(count)), y(x.size());
    for (std::int64_t i = 0; i < count; ++i)
      x[static_cast<std::size_t>(i)] = std::sin(0.7f * static_cast<float>(i)) * 9.0f;
    const float top = max_of(x.data(), count);
    EXPECT_EQ(top, *std::max_element(x.begin(), x.end())) << count;
    const float sum = exp_shifted_sum(x.data(), y.data(), count, top);
    double expected = 0.0;
    for (std::int64_t i = 0; i < count; ++i) {
      // The argument as the function forms it, in float (its rounding is not the polynomial's error).
      const double e = std::exp(static_cast<double>(x[static_cast<std::size_t>(i)] - top));
      EXPECT_NEAR(y[static_cast<std::size_t>(i)], e, 4e-7 * e) << count << " " << i;
      expected += e;
    }
    EXPECT_NEAR(sum, expected, 1e-6 * expected) << count;
  }
}

TEST(VectorMath, EveryTailLengthGivesEachLaneItsOwnResult) {
  const std::vector<float> all = span(-6.0f, 6.0f, 37);
  for (const MapFn fn : {exp_map, silu_map, gelu_map, quick_gelu_map}) {
    const std::vector<float> whole = mapped(fn, all);
    for (std::size_t count = 1; count <= all.size(); ++count) {
      const std::vector<float> head(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count));
      const std::vector<float> part = mapped(fn, head);
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(part[i], whole[i]) << count << " " << i;
    }
  }
}

}  // namespace
}  // namespace websd::cpu
