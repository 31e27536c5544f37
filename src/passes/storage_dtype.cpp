// Storage-dtype casts of weights (see storage_dtype.h). Bytes are assembled explicitly in
// little-endian order, so the result does not depend on the host's byte order.
#include "passes/storage_dtype.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/bit_cast.h"
#include "core/error.h"

namespace websd::passes {
namespace {

void require_supported(DType storage, const char* what) {
  if (!storage_dtype_supported(storage)) {
    throw Error("weights", std::string(what) + ": storage dtype " + std::string(dtype_name(storage)) +
                               " is not supported (use F32, F16 or BF16)");
  }
}

template <typename Bits>
void store_le(Bits bits, std::byte* out) {
  for (std::size_t i = 0; i < sizeof(Bits); ++i) out[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xffu);
}

template <typename Bits>
Bits load_le(const std::byte* in) {
  Bits bits = 0;
  for (std::size_t i = 0; i < sizeof(Bits); ++i) bits |= static_cast<Bits>(std::to_integer<Bits>(in[i]) << (8 * i));
  return bits;
}

}  // namespace

bool storage_dtype_supported(DType storage) {
  return storage == DType::kF32 || storage == DType::kF16 || storage == DType::kBF16;
}

DType weight_storage_dtype(const TensorType& type, DType storage) {
  require_supported(storage, "weight_storage_dtype");
  if (type.dtype != DType::kF32) return type.dtype;
  return type.rank() <= 1 ? DType::kF32 : storage;
}

std::vector<std::byte> storage_encode(std::span<const float> values, DType storage) {
  require_supported(storage, "storage_encode");
  const std::size_t size = dtype_size(storage);
  std::vector<std::byte> bytes(values.size() * size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::byte* out = bytes.data() + i * size;
    switch (storage) {
      case DType::kF16:
        store_le(f32_to_f16(values[i]), out);
        break;
      case DType::kBF16:
        store_le(f32_to_bf16(values[i]), out);
        break;
      default:
        store_le(websd::bit_cast<std::uint32_t>(values[i]), out);
        break;
    }
  }
  return bytes;
}

std::vector<float> storage_decode(std::span<const std::byte> bytes, DType storage) {
  require_supported(storage, "storage_decode");
  const std::size_t size = dtype_size(storage);
  if (bytes.size() % size != 0) {
    throw Error("weights", "storage_decode: " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                               std::string(dtype_name(storage)) + " values (" + std::to_string(size) + " bytes each)");
  }
  std::vector<float> values(bytes.size() / size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::byte* in = bytes.data() + i * size;
    switch (storage) {
      case DType::kF16:
        values[i] = f16_to_f32(load_le<std::uint16_t>(in));
        break;
      case DType::kBF16:
        values[i] = bf16_to_f32(load_le<std::uint16_t>(in));
        break;
      default:
        values[i] = websd::bit_cast<float>(load_le<std::uint32_t>(in));
        break;
    }
  }
  return values;
}

StorageRoundTripError storage_round_trip_error(std::span<const float> values, DType storage) {
  const std::vector<float> back = storage_decode(storage_encode(values, storage), storage);
  StorageRoundTripError error;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = values[i], y = back[i];
    if (std::isnan(x)) {
      error.nan_lost += !std::isnan(y);
      continue;
    }
    if (std::isinf(x)) continue;  // infinities are exact in every storage dtype
    if (std::isinf(y)) {
      ++error.overflowed;
      continue;
    }
    const double diff = std::abs(x - y);
    error.max_abs = std::max(error.max_abs, diff);
    if (x != 0.0) error.max_rel = std::max(error.max_rel, diff / std::abs(x));
    error.flushed_zero += x != 0.0 && y == 0.0;
  }
  return error;
}

}  // namespace websd::passes
