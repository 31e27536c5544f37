// Helpers for CPU-target tests: random tensors and relative error.
#pragma once

#include <random>

#include "targets/cpu/runtime/cpu_tensor.h"
#include "support/tensor_compare.h"

namespace websd::cpu::test {

inline CpuTensor random_tensor(const Shape& shape, std::uint32_t seed, float scale = 1.0f) {
  CpuTensor tensor = CpuTensor::allocate({DType::kF32, shape});
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (auto& v : *tensor.f32) v = normal(engine);
  return tensor;
}

using websd::test::relative_l2;

}  // namespace websd::cpu::test
