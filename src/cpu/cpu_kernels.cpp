#include "cpu/cpu_kernels.h"

#include <sys/mman.h>

#include <map>

#include "core/error.h"

namespace websd::cpu {
namespace {

const std::map<std::string, CpuKernel>& kernels() {
  static const std::map<std::string, CpuKernel> table = [] {
    CpuKernelTable list;
    add_elementwise_kernels(list);
    add_linalg_kernels(list);
    add_shape_kernels(list);
    add_norm_kernels(list);
    add_attention_kernels(list);
    add_channels_last_kernels(list);
    std::map<std::string, CpuKernel> map;
    for (auto& [name, kernel] : list) {
      if (!map.emplace(name, std::move(kernel)).second) throw Error("cpu", "kernel '" + name + "' registered twice");
    }
    return map;
  }();
  return table;
}

}  // namespace

const CpuKernel* cpu_kernel_lookup(const std::string& op_name) {
  const auto it = kernels().find(op_name);
  return it == kernels().end() ? nullptr : &it->second;
}

bool cpu_supports(const std::string& op_name) { return cpu_kernel_lookup(op_name) != nullptr; }

CpuTensor CpuTensor::allocate(const graph::TensorType& type) {
  CpuTensor tensor{type, nullptr, nullptr};
  const auto count = static_cast<std::size_t>(type.numel());
  if (dtype_is_float(type.dtype)) {
    tensor.f32 = std::make_shared<std::vector<float>>();
    tensor.f32->reserve(count);
    // Large activations (hundreds of MiB in a 512x512 VAE decode) are first touched by the
    // resize below: on transparent huge pages that costs one fault per 2 MiB instead of per 4 KiB.
    constexpr std::size_t kHugePage = 2u << 20;
    const std::size_t bytes = count * sizeof(float);
    if (bytes >= 2 * kHugePage) {
      const auto begin = reinterpret_cast<std::uintptr_t>(tensor.f32->data());
      const std::uintptr_t aligned = (begin + kHugePage - 1) & ~(kHugePage - 1);
      const std::uintptr_t end = (begin + bytes) & ~(kHugePage - 1);
      if (end > aligned) madvise(reinterpret_cast<void*>(aligned), end - aligned, MADV_HUGEPAGE);  // a hint only
    }
    tensor.f32->resize(count);
  } else {
    tensor.i64 = std::make_shared<std::vector<std::int64_t>>(count);
  }
  return tensor;
}

}  // namespace websd::cpu
