// Softmax of one row in place, shared by the softmax and attention kernels. Thread-safe (pure).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace websd::cpu {

// Softmax over row[0, visible); row[visible, width) are masked keys and become 0.
inline void softmax_in_place(float* row, std::int64_t visible, std::int64_t width) {
  const float max_value = *std::max_element(row, row + visible);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < visible; ++i) sum += (row[i] = std::exp(row[i] - max_value));
  const float inv = 1.0f / sum;
  for (std::int64_t i = 0; i < visible; ++i) row[i] *= inv;
  std::fill(row + visible, row + width, 0.0f);
}

}  // namespace websd::cpu
