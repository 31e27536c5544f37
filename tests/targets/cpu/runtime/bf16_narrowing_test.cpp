// The CPU kernels' vectorised narrowing to bf16 (vector_math.h) gives core/dtype.h's f32_to_bf16
// bits for every value: ties to even, NaN kept quiet, infinities, denormals, and every tail length
// of the 16-lane loops.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dtype.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

std::vector<float> awkward_values() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               std::bit_cast<float>(0x3f808000u),  // a tie: rounds to even (down)
                               std::bit_cast<float>(0x3f818000u),  // a tie: rounds to even (up)
                               std::bit_cast<float>(0x3f80ffffu),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               std::bit_cast<float>(0x7f800001u),  // a signalling NaN
                               std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::max(),
                               -3.14159f};
  for (int i = 0; i < 40; ++i) values.push_back(std::ldexp(static_cast<float>(i * 7919 % 1000) - 500.0f, i % 9 - 4));
  return values;
}

TEST(Bf16Narrowing, EveryValueAndEveryTailLengthGivesF32ToBf16sBits) {
  const std::vector<float> values = awkward_values();
  for (std::size_t count = 0; count <= values.size(); ++count) {
    std::vector<std::uint16_t> narrowed(count, 0xdead);
    narrow_to_bf16(values.data(), narrowed.data(), static_cast<std::int64_t>(count));
    for (std::size_t i = 0; i < count; ++i) {
      EXPECT_EQ(narrowed[i], f32_to_bf16(values[i])) << "value " << i << " of " << count;
    }
  }
  std::vector<std::uint16_t> scaled(values.size());
  narrow_to_bf16(values.data(), scaled.data(), static_cast<std::int64_t>(values.size()), 0.5f);
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(scaled[i], f32_to_bf16(values[i] * 0.5f)) << i;
}

}  // namespace
}  // namespace websd::cpu
