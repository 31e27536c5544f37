#include "support/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace websd::test {
namespace {

void expect_same_size(std::span<const float> actual, std::span<const float> expected, const char* what) {
  if (actual.size() != expected.size()) {
    std::string message = what;
    message += ": sizes differ";
    throw std::runtime_error(message);
  }
}

}  // namespace

double relative_l2(std::span<const float> actual, std::span<const float> expected) {
  expect_same_size(actual, expected, "relative_l2");
  double difference = 0, norm = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double delta = static_cast<double>(actual[i]) - expected[i];
    difference += delta * delta;
    norm += static_cast<double>(expected[i]) * expected[i];
  }
  return std::sqrt(difference) / std::max(std::sqrt(norm), 1e-30);
}

double max_abs_difference(std::span<const float> actual, std::span<const float> expected) {
  expect_same_size(actual, expected, "max_abs_difference");
  double worst = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(actual[i]) - expected[i]));
  }
  return worst;
}

}  // namespace websd::test
