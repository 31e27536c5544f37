// Helpers for CPU-target tests: random tensors, relative error, convolutions with packed weights.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "support/tensor_compare.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/cpu_tensor.h"
#include "targets/cpu/runtime/onednn_conv.h"

namespace websd::cpu::test {

inline CpuTensor random_tensor(const Shape& shape, std::uint32_t seed, float scale = 1.0f) {
  CpuTensor tensor = CpuTensor::allocate({DType::kF32, shape});
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (auto& v : *tensor.f32) v = normal(engine);
  return tensor;
}

using websd::test::relative_l2;

// y (the residual when g accumulates) after the convolution of x with the OIHW weight w packed as the
// kernel reads it (narrowed to bf16 for layouts that read bf16, to f16 for those held in f16).
inline std::vector<float> conv_with_packed_weight(const ConvGeometry& g, const std::vector<float>& x,
                                                  const std::vector<float>& w, const std::vector<float>& bias,
                                                  std::vector<float> y) {
  const std::vector<float> packed = conv_pack_weight(g, w.data());
  std::vector<std::uint16_t> narrowed;
  const float* weight = packed.data();
  const std::string layout = conv_weight_layout(g);
  if (conv_layout_reads_bf16(layout) || conv_layout_holds_f16(layout)) {
    for (const float v : packed) narrowed.push_back(conv_layout_reads_bf16(layout) ? f32_to_bf16(v) : f32_to_f16(v));
    weight = reinterpret_cast<const float*>(narrowed.data());
  }
  onednn_conv2d(g, x.data(), weight, !conv_weight_layout(g).empty(), bias.data(), y.data());
  return y;
}

// The linear kernel's y = x w^T (+ bias) for x [rows, in] and w [out, in] (held as its layout says).
inline std::vector<float> run_linear(const CpuTensor& x, const CpuTensor& w, const CpuTensor* bias,
                                     const Attrs& attrs) {
  CpuTensor y = CpuTensor::allocate({DType::kF32, {x.type.shape[0], w.type.shape[0]}});
  std::vector<const CpuTensor*> in = {&x, &w};
  if (bias != nullptr) in.push_back(bias);
  (*cpu_kernel_lookup("linear"))(in, attrs, y);
  return *y.f32;
}

}  // namespace websd::cpu::test
