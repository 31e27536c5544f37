// Host tensors as the CPU executor sees them: a type plus shared float32 or int64 storage, or a view
// of memory owned elsewhere (a planned arena, a memory-mapped artifact weight), which the owner
// keeps alive while the view is used. Values produced by view ops (reshape) share storage with their
// input; weights share the caller's storage without a copy. Kernels read and write through
// fdata()/idata() only, so they run the same on owned storage and on views. Not synchronised: the
// executor owns all mutation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor_type.h"

namespace websd::cpu {

struct CpuTensor {
  TensorType type;
  std::shared_ptr<std::vector<float>> f32;         // float dtypes (computed in float32)
  std::shared_ptr<std::vector<std::int64_t>> i64;  // integer dtypes
  // Empty for row-major storage of `type`; otherwise names a kernel-specific packing of a weight
  // (see onednn_conv.h), which only the kernel that asked for it reads.
  std::string layout = {};
  // When set, the tensor's values live here (a view) and f32/i64 are empty.
  float* f32_view = nullptr;
  std::int64_t* i64_view = nullptr;

  // Allocates uninitialised-by-contract storage of the right kind for `type`.
  static CpuTensor allocate(const TensorType& type);
  // A float32 copy of a host tensor, and back.
  static CpuTensor from_host(const HostTensor& tensor);
  HostTensor to_host() const;
  // A view of `data` (float32 for float dtypes, int64 otherwise), which must hold numel() values.
  static CpuTensor view(const TensorType& type, void* data);
  const float* fdata() const { return f32_view != nullptr ? f32_view : f32->data(); }
  float* fdata() { return f32_view != nullptr ? f32_view : f32->data(); }
  const std::int64_t* idata() const { return i64_view != nullptr ? i64_view : i64->data(); }
  std::int64_t numel() const { return type.numel(); }
};

}  // namespace websd::cpu
