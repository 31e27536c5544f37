#include "targets/cpu/runtime/cpu_kernels.h"

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
    add_fused_elementwise_kernels(list);
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

CpuTensor CpuTensor::allocate(const TensorType& type) {
  CpuTensor tensor{type, nullptr, nullptr};
  const auto count = static_cast<std::size_t>(type.numel());
  if (dtype_is_float(type.dtype)) {
    tensor.f32 = std::make_shared<std::vector<float>>(count);
  } else {
    tensor.i64 = std::make_shared<std::vector<std::int64_t>>(count);
  }
  return tensor;
}

CpuTensor CpuTensor::from_host(const HostTensor& tensor) {
  return {TensorType{DType::kF32, tensor.shape}, std::make_shared<std::vector<float>>(tensor.data), nullptr};
}

HostTensor CpuTensor::to_host() const { return HostTensor(type.shape, std::vector<float>(fdata(), fdata() + numel())); }

CpuTensor CpuTensor::view(const TensorType& type, void* data) {
  CpuTensor tensor{type, nullptr, nullptr};
  if (dtype_is_float(type.dtype)) {
    tensor.f32_view = static_cast<float*>(data);
  } else {
    tensor.i64_view = static_cast<std::int64_t*>(data);
  }
  return tensor;
}

}  // namespace websd::cpu
