#include "pipeline/random/torch_box_muller.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/bit_cast.h"

namespace websd {
namespace {

// Constants of avx_mathfun.h (cephes single-precision log, sin and cos), rounded to float as torch does.
constexpr float kSqrtHalf = 0.707106781186547524f;
constexpr float kLogPoly[] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                              -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                              2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
constexpr float kLogQ1 = -2.12194440e-4f;
constexpr float kLogQ2 = 0.693359375f;
constexpr float kFourOverPi = 1.27323954473516f;
constexpr float kMinusDp1 = -0.78515625f;
constexpr float kMinusDp2 = -2.4187564849853515625e-4f;
constexpr float kMinusDp3 = -3.77489497744594108e-8f;
constexpr float kSinPoly[] = {-1.9515295891E-4f, 8.3321608736E-3f, -1.6666654611E-1f};
constexpr float kCosPoly[] = {2.443315711809948E-005f, -1.388731625493765E-003f, 4.166664568298827E-002f};
// normal_fill_AVX2 rounds 2 * pi (a double) to float once.
constexpr float kTwoPi = static_cast<float>(2.0 * 3.141592653589793238462643383279502884);

constexpr std::uint32_t kSignBit = 0x80000000u;
constexpr std::uint32_t kExponentBits = 0x7f800000u;

std::uint32_t bits_of(float value) { return websd::bit_cast<std::uint32_t>(value); }
float float_of(std::uint32_t bits) { return websd::bit_cast<float>(bits); }

}  // namespace

float torch_avx2_log(float x) {
  if (x <= 0.0f) return float_of(0xffffffffu);  // torch ORs an all-ones mask: a NaN
  x = std::max(x, std::numeric_limits<float>::min());
  const std::uint32_t bits = bits_of(x);
  const auto exponent = static_cast<std::int32_t>(bits >> 23) - 0x7f;
  // Mantissa scaled into [0.5, 1), exponent counted from there.
  x = float_of((bits & ~kExponentBits) | bits_of(0.5f));
  float e = static_cast<float>(exponent) + 1.0f;
  const bool below_sqrt_half = x < kSqrtHalf;
  const float extra = below_sqrt_half ? x : 0.0f;
  x = x - 1.0f;
  e = e - (below_sqrt_half ? 1.0f : 0.0f);
  x = x + extra;
  const float z = x * x;

  float y = kLogPoly[0];
  for (int i = 1; i < 9; ++i) y = std::fma(y, x, kLogPoly[i]);  // contracted Horner steps
  y = y * x;
  y = std::fma(y, z, e * kLogQ1);
  y = std::fma(-z, 0.5f, y);  // y - z * 0.5, contracted
  x = x + y;
  return std::fma(e, kLogQ2, x);
}

SinCos torch_avx2_sincos(float x) {
  std::uint32_t sin_sign = bits_of(x) & kSignBit;
  x = float_of(bits_of(x) & ~kSignBit);

  // Octant j rounded up to even; the truncating conversion matches cvttps for x in range.
  auto octant = static_cast<std::int32_t>(x * kFourOverPi);
  octant = (octant + 1) & ~1;
  const auto octant_float = static_cast<float>(octant);
  sin_sign ^= static_cast<std::uint32_t>(octant & 4) << 29;
  const std::uint32_t cos_sign = static_cast<std::uint32_t>(~(octant - 2) & 4) << 29;
  const bool sin_uses_sin_poly = (octant & 2) == 0;

  // Cody-Waite reduction in three contracted steps: x - j * pi / 4.
  x = std::fma(octant_float, kMinusDp1, x);
  x = std::fma(octant_float, kMinusDp2, x);
  x = std::fma(octant_float, kMinusDp3, x);
  const float z = x * x;

  float cos_poly = std::fma(kCosPoly[0], z, kCosPoly[1]);
  cos_poly = std::fma(cos_poly, z, kCosPoly[2]);
  cos_poly = cos_poly * z;
  cos_poly = std::fma(cos_poly, z, -(z * 0.5f));
  cos_poly = cos_poly + 1.0f;

  float sin_poly = std::fma(kSinPoly[0], z, kSinPoly[1]);
  sin_poly = std::fma(sin_poly, z, kSinPoly[2]);
  sin_poly = sin_poly * z;
  sin_poly = std::fma(sin_poly, x, x);

  // torch selects with bit masks and adds the masked-out +0 back; keep those adds (they turn -0 into +0).
  const float sin_from_sin_poly = sin_uses_sin_poly ? sin_poly : 0.0f;
  const float sin_from_cos_poly = sin_uses_sin_poly ? 0.0f : cos_poly;
  const float sin_value = sin_from_cos_poly + sin_from_sin_poly;
  const float cos_value = (cos_poly - sin_from_cos_poly) + (sin_poly - sin_from_sin_poly);
  return {float_of(bits_of(sin_value) ^ sin_sign), float_of(bits_of(cos_value) ^ cos_sign)};
}

void torch_box_muller_16(std::span<float, 16> values) {
  for (std::size_t j = 0; j < 8; ++j) {
    const float u1 = 1.0f - values[j];  // [0, 1) -> (0, 1] for the log
    const float u2 = values[j + 8];
    const float radius = std::sqrt(-2.0f * torch_avx2_log(u1));
    const SinCos angle = torch_avx2_sincos(kTwoPi * u2);
    // torch ends with fmadd(n, std = 1, mean = 0), which is n + 0.
    values[j] = radius * angle.cos + 0.0f;
    values[j + 8] = radius * angle.sin + 0.0f;
  }
}

}  // namespace websd
