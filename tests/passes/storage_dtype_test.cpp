// Storage-dtype casts: little-endian byte layout, exact round trips of representable values, ties
// rounding to even, f16 overflow to infinity, NaN kept NaN (bf16 too, even for payloads that plain
// truncation would turn into infinity), the round-trip error report and which weights stay f32.
#include "passes/storage_dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/bit_cast.h"
#include "core/error.h"
#include "pass_test_support.h"

namespace websd::passes {
namespace {

std::vector<float> round_trip(const std::vector<float>& values, DType storage) {
  return storage_decode(storage_encode(values, storage), storage);
}

std::vector<std::uint8_t> bytes_of(const std::vector<float>& values, DType storage) {
  std::vector<std::uint8_t> out;
  for (const std::byte b : storage_encode(values, storage)) out.push_back(std::to_integer<std::uint8_t>(b));
  return out;
}

// Every finite value of a 16-bit format, decoded from all bit patterns.
std::vector<float> every_finite(float (*decode)(std::uint16_t)) {
  std::vector<float> values;
  for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const float value = decode(static_cast<std::uint16_t>(bits));
    if (std::isfinite(value)) values.push_back(value);
  }
  return values;
}

std::uint32_t bits_of(float value) { return websd::bit_cast<std::uint32_t>(value); }

TEST(StorageDType, BytesAreLittleEndian) {
  EXPECT_EQ(bytes_of({1.0f}, DType::kF32), (std::vector<std::uint8_t>{0x00, 0x00, 0x80, 0x3f}));
  EXPECT_EQ(bytes_of({1.0f, -2.0f}, DType::kF16), (std::vector<std::uint8_t>{0x00, 0x3c, 0x00, 0xc0}));
  EXPECT_EQ(bytes_of({1.0f, -2.0f}, DType::kBF16), (std::vector<std::uint8_t>{0x80, 0x3f, 0x00, 0xc0}));
  const std::vector<std::byte> raw{std::byte{0x00}, std::byte{0x3c}, std::byte{0x80}, std::byte{0x3f}};
  EXPECT_EQ(storage_decode(raw, DType::kF16), (std::vector<float>{1.0f, 1.875f}));  // 0x3c00, 0x3f80
  EXPECT_EQ(storage_decode(raw, DType::kBF16), (std::vector<float>{0.0078125f, 1.0f}));
  EXPECT_EQ(storage_decode(raw, DType::kF32), (std::vector<float>{websd::bit_cast<float>(0x3f803c00u)}));
}

TEST(StorageDType, F32RoundTripKeepsEveryBit) {
  const std::vector<float> values{0.0f,
                                  -0.0f,
                                  1e-45f,
                                  -3.5f,
                                  65504.0f,
                                  3.4e38f,
                                  std::numeric_limits<float>::infinity(),
                                  websd::bit_cast<float>(0x7fa00001u)};  // a signalling NaN with a payload
  const auto back = round_trip(values, DType::kF32);
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(bits_of(back[i]), bits_of(values[i])) << i;
}

TEST(StorageDType, RepresentableValuesRoundTripExactly) {
  for (const auto& [storage, decode] : {std::pair{DType::kF16, &f16_to_f32}, std::pair{DType::kBF16, &bf16_to_f32}}) {
    const std::vector<float> values = every_finite(decode);
    const auto back = round_trip(values, storage);
    ASSERT_EQ(back.size(), values.size());
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < values.size(); ++i) mismatches += bits_of(back[i]) != bits_of(values[i]);
    EXPECT_EQ(mismatches, 0u) << dtype_name(storage);
    const StorageRoundTripError error = storage_round_trip_error(values, storage);
    EXPECT_EQ(error.max_abs, 0.0) << dtype_name(storage);
    EXPECT_EQ(error.max_rel, 0.0) << dtype_name(storage);
    EXPECT_EQ(error.overflowed + error.flushed_zero + error.nan_lost, 0u) << dtype_name(storage);
  }
}

TEST(StorageDType, F16TiesRoundToEven) {
  const float ulp = std::ldexp(1.0f, -10);  // f16 spacing in [1, 2)
  const std::vector<float> values{1.0f + ulp / 2,
                                  1.0f + 3 * ulp / 2,
                                  -(1.0f + ulp / 2),
                                  -(1.0f + 3 * ulp / 2),
                                  std::ldexp(1.0f, -25),
                                  std::ldexp(3.0f, -25),
                                  1.0f + ulp / 2 + std::ldexp(1.0f, -20)};  // just above the tie rounds up
  EXPECT_EQ(round_trip(values, DType::kF16), (std::vector<float>{1.0f, 1.0f + 2 * ulp, -1.0f, -(1.0f + 2 * ulp), 0.0f,
                                                                 std::ldexp(2.0f, -24), 1.0f + ulp}));
}

TEST(StorageDType, BF16TiesRoundToEven) {
  const std::vector<float> values{websd::bit_cast<float>(0x3f808000u), websd::bit_cast<float>(0x3f818000u),
                                  websd::bit_cast<float>(0xbf808000u), websd::bit_cast<float>(0x3f808001u)};
  EXPECT_EQ(round_trip(values, DType::kBF16),
            (std::vector<float>{websd::bit_cast<float>(0x3f800000u), websd::bit_cast<float>(0x3f820000u),
                                websd::bit_cast<float>(0xbf800000u), websd::bit_cast<float>(0x3f810000u)}));
}

TEST(StorageDType, F16OverflowsToInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values{65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e6f, 3.4e38f, inf, -inf};
  EXPECT_EQ(round_trip(values, DType::kF16), (std::vector<float>{65504.0f, 65504.0f, inf, -inf, inf, inf, inf, -inf}));
  const StorageRoundTripError error = storage_round_trip_error(values, DType::kF16);
  EXPECT_EQ(error.overflowed, 4u);  // the infinities given were infinite already
  EXPECT_NEAR(error.max_abs, 15.99, 0.01);
  // bf16 keeps float32's range: only values that round past FLT_MAX overflow.
  const auto bf16 = round_trip({1e6f, 3.38e38f, -1e38f}, DType::kBF16);
  for (const float value : bf16) EXPECT_TRUE(std::isfinite(value)) << value;
  EXPECT_TRUE(std::isinf(round_trip({std::numeric_limits<float>::max()}, DType::kBF16)[0]));
}

TEST(StorageDType, NaNStaysNaN) {
  const std::vector<float> nans{std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                                websd::bit_cast<float>(0x7f800001u),   // payload only in bits truncation drops
                                websd::bit_cast<float>(0xff800001u),   // the same, negative
                                websd::bit_cast<float>(0x7fbfffffu)};  // signalling, top payload bits
  for (const DType storage : {DType::kF16, DType::kBF16, DType::kF32}) {
    for (const float value : round_trip(nans, storage)) EXPECT_TRUE(std::isnan(value)) << dtype_name(storage);
    EXPECT_EQ(storage_round_trip_error(nans, storage).nan_lost, 0u) << dtype_name(storage);
  }
  // The sign survives.
  EXPECT_TRUE(std::signbit(round_trip({websd::bit_cast<float>(0xff800001u)}, DType::kBF16)[0]));
  EXPECT_TRUE(std::signbit(round_trip({websd::bit_cast<float>(0xff800001u)}, DType::kF16)[0]));
}

TEST(StorageDType, RoundTripErrorReportsAbsoluteRelativeAndFlushed) {
  const float step = std::ldexp(1.0f, -12);  // a quarter of f16's spacing in [1, 2): rounds down
  const StorageRoundTripError error =
      storage_round_trip_error(std::vector<float>{0.0f, 1.0f + step, -4.0f, 1e-9f}, DType::kF16);
  EXPECT_DOUBLE_EQ(error.max_abs, step);
  EXPECT_DOUBLE_EQ(error.max_rel, 1.0);  // 1e-9 is below f16's smallest subnormal: all of it is lost
  EXPECT_EQ(error.flushed_zero, 1u);
  EXPECT_EQ(error.overflowed, 0u);
  const StorageRoundTripError bf16 =
      storage_round_trip_error(std::vector<float>{1.0f + std::ldexp(1.0f, -9)}, DType::kBF16);
  EXPECT_DOUBLE_EQ(bf16.max_abs, std::ldexp(1.0, -9));
  EXPECT_NEAR(bf16.max_rel, std::ldexp(1.0, -9), 1e-5);
}

TEST(StorageDType, NormsBiasesAndOtherVectorsStayF32) {
  for (const DType storage : {DType::kF16, DType::kBF16}) {
    EXPECT_EQ(weight_storage_dtype(TensorType{DType::kF32, {320}}, storage), DType::kF32);  // bias, norm scale
    EXPECT_EQ(weight_storage_dtype(TensorType{DType::kF32, {}}, storage), DType::kF32);
    EXPECT_EQ(weight_storage_dtype(TensorType{DType::kF32, {960, 320}}, storage), storage);  // merged to_qkv
    EXPECT_EQ(weight_storage_dtype(TensorType{DType::kF32, {320, 4, 3, 3}}, storage), storage);
    EXPECT_EQ(weight_storage_dtype(TensorType{DType::kI64, {1, 77}}, storage), DType::kI64);
  }
  EXPECT_EQ(weight_storage_dtype(TensorType{DType::kF32, {8, 8}}, DType::kF32), DType::kF32);
}

TEST(StorageDType, RefusesUnsupportedDTypesAndTruncatedBytes) {
  EXPECT_TRUE(storage_dtype_supported(DType::kBF16));
  EXPECT_FALSE(storage_dtype_supported(DType::kF64));
  test::expect_error_mentions([] { storage_encode(std::vector<float>{1.0f}, DType::kI8); }, {"[weights]", "I8"});
  test::expect_error_mentions([] { weight_storage_dtype({DType::kF32, {4, 4}}, DType::kF64); }, {"F64", "F16"});
  const std::vector<std::byte> three(3);
  test::expect_error_mentions([&] { storage_decode(three, DType::kF16); }, {"3 bytes", "F16", "2 bytes each"});
}

}  // namespace
}  // namespace websd::passes
