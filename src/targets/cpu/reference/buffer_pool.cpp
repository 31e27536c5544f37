#include "targets/cpu/reference/buffer_pool.h"

namespace websd::cpu {

CpuTensor BufferPool::allocate(const TensorType& type, bool exact) {
  if (dtype_is_float(type.dtype)) {
    const auto count = static_cast<std::size_t>(type.numel());
    const auto found = free_.lower_bound(count);
    if (found != free_.end() && (found->first == count || (!exact && found->first <= 2 * count))) {
      CpuTensor tensor{type, std::move(found->second), nullptr};
      free_.erase(found);
      return tensor;
    }
  }
  return CpuTensor::allocate(type);
}

void BufferPool::release(CpuTensor& tensor) {
  if (tensor.f32 && tensor.f32.use_count() == 1) free_.emplace(tensor.f32->size(), std::move(tensor.f32));
  tensor = CpuTensor{};
}

}  // namespace websd::cpu
