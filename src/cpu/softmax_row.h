// Softmax of one row in place, shared by the softmax and attention kernels. Thread-safe (pure).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu/vector_math.h"

namespace websd::cpu {

// Softmax over row[0, visible); row[visible, width) are masked keys and become 0.
inline void softmax_in_place(float* row, std::int64_t visible, std::int64_t width) {
  const float sum = exp_shifted_sum(row, row, visible, max_of(row, visible));
  scale_in_place(row, visible, 1.0f / sum);
  std::fill(row + visible, row + width, 0.0f);
}

}  // namespace websd::cpu
