// Splits [0, count) into contiguous chunks run on the OpenMP thread pool. `body(begin, end)` must be
// safe to run concurrently on disjoint ranges. Small ranges run inline.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace websd::cpu {

template <typename Body>
void parallel_for(std::int64_t count, std::int64_t min_chunk, const Body& body) {
  const std::int64_t threads =
      std::min<std::int64_t>(omp_get_max_threads(), std::max<std::int64_t>(1, count / min_chunk));
  if (threads <= 1) {
    if (count > 0) body(std::int64_t{0}, count);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t t = 0; t < threads; ++t) {
    const std::int64_t begin = count * t / threads;
    const std::int64_t end = count * (t + 1) / threads;
    if (begin < end) body(begin, end);
  }
}

}  // namespace websd::cpu
