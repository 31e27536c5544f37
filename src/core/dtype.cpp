#include "core/dtype.h"

#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>

#include "core/bit_cast.h"
#include "core/error.h"

namespace websd {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
  bool is_float;
};

constexpr std::array<DTypeInfo, 10> kDTypes = {{
    {DType::kF64, "F64", 8, true},
    {DType::kF32, "F32", 4, true},
    {DType::kF16, "F16", 2, true},
    {DType::kBF16, "BF16", 2, true},
    {DType::kI64, "I64", 8, false},
    {DType::kI32, "I32", 4, false},
    {DType::kI16, "I16", 2, false},
    {DType::kI8, "I8", 1, false},
    {DType::kU8, "U8", 1, false},
    {DType::kBool, "BOOL", 1, false},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  throw Error("dtype", "unknown dtype enumerator " + std::to_string(static_cast<int>(dtype)));
}

template <typename T>
T load_unaligned(const void* src, std::size_t index) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char*>(src) + index * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

std::size_t dtype_size(DType dtype) { return info(dtype).size; }
std::string_view dtype_name(DType dtype) { return info(dtype).name; }
bool dtype_is_float(DType dtype) { return info(dtype).is_float; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& entry : kDTypes) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

float f16_to_f32(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: value = mantissa * 2^-24, exact in float32.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    return websd::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  return websd::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t f32_to_f16(float value) {
  const std::uint32_t bits = websd::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) {  // Inf or NaN
    const std::uint16_t nan_payload = abs_bits > 0x7f800000u ? 0x200u : 0u;
    return static_cast<std::uint16_t>(sign | 0x7c00u | nan_payload);
  }
  if (abs_bits >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow
  if (abs_bits < 0x38800000u) {
    // Result is subnormal (or zero): round |value| * 2^24 to the nearest integer, ties to even.
    const float scaled = websd::bit_cast<float>(abs_bits) * 16777216.0f;
    const auto rounded = static_cast<std::uint16_t>(std::nearbyint(scaled));
    return static_cast<std::uint16_t>(sign | rounded);
  }
  // Normal: rebias exponent and round the 13 dropped mantissa bits to nearest even.
  std::uint32_t half = ((abs_bits >> 13) - (112u << 10));
  const std::uint32_t remainder = abs_bits & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

float bf16_to_f32(std::uint16_t bits) { return websd::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t f32_to_bf16(float value) {
  const std::uint32_t bits = websd::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // keep NaN quiet
  }
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

void convert_to_f32(const void* src, DType src_dtype, std::size_t count, float* dst) {
  switch (src_dtype) {
    case DType::kF32:
      std::memcpy(dst, src, count * sizeof(float));
      return;
    case DType::kF16:
      for (std::size_t i = 0; i < count; ++i) dst[i] = f16_to_f32(load_unaligned<std::uint16_t>(src, i));
      return;
    case DType::kBF16:
      for (std::size_t i = 0; i < count; ++i) dst[i] = bf16_to_f32(load_unaligned<std::uint16_t>(src, i));
      return;
    case DType::kF64:
      for (std::size_t i = 0; i < count; ++i) dst[i] = static_cast<float>(load_unaligned<double>(src, i));
      return;
    default:
      throw Error("dtype", "cannot convert " + std::string(dtype_name(src_dtype)) +
                               " to F32: only F64, F32, F16 and BF16 are float types");
  }
}

std::string dtype_lower_name(DType dtype) {
  std::string name(dtype_name(dtype));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::optional<DType> dtype_from_lower_name(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::optional<DType> dtype = dtype_from_name(upper);
  if (!dtype || dtype_lower_name(*dtype) != name) return std::nullopt;  // "F32" is not a lower-case name
  return dtype;
}

}  // namespace websd
