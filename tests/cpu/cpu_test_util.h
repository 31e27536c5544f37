// Helpers for CPU-target tests: random tensors and relative error.
#pragma once

#include <cmath>
#include <random>

#include "cpu/cpu_tensor.h"

namespace websd::cpu::test {

inline CpuTensor random_tensor(const Shape& shape, std::uint32_t seed, float scale = 1.0f) {
  CpuTensor tensor = CpuTensor::allocate({DType::kF32, shape});
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (auto& v : *tensor.f32) v = normal(engine);
  return tensor;
}

inline double relative_l2(const std::vector<float>& actual, const std::vector<float>& expected) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    diff += (actual[i] - expected[i]) * static_cast<double>(actual[i] - expected[i]);
    norm += expected[i] * static_cast<double>(expected[i]);
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

}  // namespace websd::cpu::test
