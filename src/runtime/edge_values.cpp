#include "runtime/edge_values.h"

#include <cstring>
#include <limits>

#include "core/error.h"

namespace websd::runtime {

bool floats_fit(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16; }

bool ids_fit(DType dtype) { return dtype == DType::kI64 || dtype == DType::kI32; }

void floats_to(std::span<const float> values, DType dtype, std::vector<std::byte>& out) {
  if (!floats_fit(dtype)) throw Error("runtime", "float values cannot be stored as " + dtype_lower_name(dtype));
  out.resize(values.size() * dtype_size(dtype));
  if (dtype == DType::kF32) {
    std::memcpy(out.data(), values.data(), out.size());
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = dtype == DType::kF16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
}

void ids_to(std::span<const std::int64_t> ids, DType dtype, std::vector<std::byte>& out) {
  if (!ids_fit(dtype)) throw Error("runtime", "token ids cannot be stored as " + dtype_lower_name(dtype));
  out.resize(ids.size() * dtype_size(dtype));
  if (dtype == DType::kI64) {
    std::memcpy(out.data(), ids.data(), out.size());
    return;
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < std::numeric_limits<std::int32_t>::min() || ids[i] > std::numeric_limits<std::int32_t>::max()) {
      throw Error("runtime", "id " + std::to_string(ids[i]) + " at " + std::to_string(i) + " does not fit in i32");
    }
    const auto narrow = static_cast<std::int32_t>(ids[i]);
    std::memcpy(out.data() + 4 * i, &narrow, 4);
  }
}

}  // namespace websd::runtime
