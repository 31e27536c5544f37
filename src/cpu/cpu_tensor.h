// Host tensors as the CPU executor sees them: a type plus shared float32 or int64 storage. Values
// produced by view ops (reshape) share storage with their input; weights share the caller's storage
// without a copy. Not synchronised: the executor owns all mutation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/tensor_type.h"

namespace websd::cpu {

struct CpuTensor {
  graph::TensorType type;
  std::shared_ptr<std::vector<float>> f32;         // float dtypes (computed in float32)
  std::shared_ptr<std::vector<std::int64_t>> i64;  // integer dtypes
  // Empty for row-major storage of `type`; otherwise names a kernel-specific packing of a weight
  // (see onednn_conv.h), which only the kernel that asked for it reads.
  std::string layout = {};

  // Allocates uninitialised-by-contract storage of the right kind for `type`.
  static CpuTensor allocate(const graph::TensorType& type);
  const float* fdata() const { return f32->data(); }
  float* fdata() { return f32->data(); }
  std::int64_t numel() const { return type.numel(); }
};

}  // namespace websd::cpu
