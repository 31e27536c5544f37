// Host values in the dtypes a function's inputs and outputs are stored in, at the Executor's edges:
// the pipeline speaks float32 tensors and int64 token ids, a device may store f16/bf16 floats and
// i32 ids (WGSL has no i64). Conversions are exact for ids (range checked) and round to nearest
// even for 16-bit floats. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/dtype.h"

namespace websd::runtime {

// Whether float32 host values convert to `dtype` (f32, f16, bf16), ids to `dtype` (i64, i32).
bool floats_fit(DType dtype);
bool ids_fit(DType dtype);

// `values` as `dtype` into `out` (resized). Throws websd::Error for a dtype floats_fit refuses.
void floats_to(std::span<const float> values, DType dtype, std::vector<std::byte>& out);
// `ids` as `dtype` into `out` (resized). Throws websd::Error naming the first id outside i32's
// range, or for a dtype ids_fit refuses.
void ids_to(std::span<const std::int64_t> ids, DType dtype, std::vector<std::byte>& out);

}  // namespace websd::runtime
