// Element types of tensors that websd reads, computes with and writes, and the conversions
// between the 16-bit float formats and float32. All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace websd {

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

// Bytes per element.
std::size_t dtype_size(DType dtype);
// The safetensors spelling: "F32", "BF16", "I64", ...
std::string_view dtype_name(DType dtype);
// Parses the safetensors spelling; nullopt for anything else.
std::optional<DType> dtype_from_name(std::string_view name);
// The IR's and the artifact's spelling: the safetensors one in lower case ("f32", "bf16", "i64").
std::string dtype_lower_name(DType dtype);
std::optional<DType> dtype_from_lower_name(std::string_view name);
bool dtype_is_float(DType dtype);

// IEEE binary16 <-> binary32, round-to-nearest-even, NaN and infinities preserved.
float f16_to_f32(std::uint16_t bits);
std::uint16_t f32_to_f16(float value);
// bfloat16 <-> binary32, round-to-nearest-even, NaN kept quiet.
float bf16_to_f32(std::uint16_t bits);
std::uint16_t f32_to_bf16(float value);

// Converts `count` elements at `src` of type `src_dtype` to float32 at `dst`.
// Throws websd::Error for a non-float source type. `src` may be unaligned.
void convert_to_f32(const void* src, DType src_dtype, std::size_t count, float* dst);

}  // namespace websd
