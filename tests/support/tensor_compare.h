// Error measures for parity tests, accumulated in double. The sizes must agree (else std::runtime_error).
#pragma once

#include <span>

namespace websd::test {

// ||actual - expected|| / ||expected|| (L2 norms over all elements).
double relative_l2(std::span<const float> actual, std::span<const float> expected);
// max |actual - expected|.
double max_abs_difference(std::span<const float> actual, std::span<const float> expected);

}  // namespace websd::test
