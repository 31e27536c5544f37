// Build-time cast of float32 weights to the artifact's storage dtype (f32, f16 or bf16) as
// little-endian bytes, the way back to float32 that a runtime takes on load, and the error a round
// trip costs. Conversions round to nearest even (core/dtype.h); f16 overflows to +-inf beyond
// 65504 (+- half an ulp), NaN stays NaN; bf16 keeps float32's range.
//
// Which weights keep float32 whatever the storage dtype (weight_storage_dtype): every tensor of
// rank 0 or 1. Those are biases and the norms' scales and shifts (GroupNorm/LayerNorm weight and
// bias): tiny next to the matrices and convolution kernels (well under 1% of an SD checkpoint's
// bytes), read once per channel, and the norms' scales are precision-sensitive. Tensors of rank >=
// 2 (linear, convolution, embedding tables, and merged Q/K/V matrices) take the storage dtype.
// Weights that are not float32 in the graph keep their own dtype.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/dtype.h"
#include "core/tensor_type.h"

namespace websd::passes {

// True for kF32, kF16 and kBF16.
bool storage_dtype_supported(DType storage);

// The dtype a weight of `type` is stored in when the artifact's storage dtype is `storage` (policy
// above). Throws websd::Error("weights", ...) if `storage` is not supported.
DType weight_storage_dtype(const TensorType& type, DType storage);

// numel x dtype_size(storage) little-endian bytes. Throws websd::Error for an unsupported dtype.
std::vector<std::byte> storage_encode(std::span<const float> values, DType storage);
// Back to float32 (exact for f16/bf16: every such value is a float32). Throws websd::Error for an
// unsupported dtype or a byte count that is not a multiple of the element size.
std::vector<float> storage_decode(std::span<const std::byte> bytes, DType storage);

// What storing `values` as `storage` and reading them back loses. NaN inputs must come back NaN
// and are otherwise not measured.
struct StorageRoundTripError {
  double max_abs = 0.0;          // max |x - back(x)| over finite x whose result is finite
  double max_rel = 0.0;          // max |x - back(x)| / |x| over finite non-zero x whose result is finite
  std::size_t overflowed = 0;    // finite values that came back as +-inf
  std::size_t flushed_zero = 0;  // non-zero values that came back as zero (below f16's subnormals)
  std::size_t nan_lost = 0;      // NaN values that did not come back NaN (always 0 for a correct cast)
};
StorageRoundTripError storage_round_trip_error(std::span<const float> values, DType storage);

}  // namespace websd::passes
