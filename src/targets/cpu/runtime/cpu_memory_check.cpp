#include "targets/cpu/runtime/cpu_memory_check.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "io/system_memory.h"
#include "targets/cpu/runtime/bf16_attention.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_conv.h"
#include "targets/cpu/runtime/onednn_linear.h"

namespace websd::cpu {

MemoryNeed cpu_memory_need(const runtime::LaunchList& list, bool weights_to_load) {
  // Other kernels' transient buffers (attention blocks, im2col of GEMM kernels) stay below this.
  constexpr std::uint64_t kWorkspaceMargin = 512ull << 20;
  MemoryNeed need;
  need.intermediates = static_cast<std::uint64_t>(list.memory.total_bytes());
  if (weights_to_load) {
    for (const runtime::LaunchWeight& weight : list.weights) {
      const bool half = weight_layout_holds_bf16(weight.layout) || weight_layout_holds_f16(weight.layout);
      const std::uint64_t value_bytes = half ? 2 : sizeof(float);
      need.weights += static_cast<std::uint64_t>(shape_numel(weight.type.shape)) * value_bytes;
    }
  }
  std::vector<ConvGeometry> convolutions;
  std::uint64_t linear_bf16 = 0;     // the largest bf16 linear layer's buffers (one runs at a time)
  std::uint64_t attention_bf16 = 0;  // the largest bf16 attention's (kept by the thread after it ran)
  std::uint64_t linear_f16 = 0;      // the largest f16-held linear weight widened (kept by the thread)
  for (const runtime::Launch& launch : list.launches) {
    const std::string& entry = list.kernel_of(launch).entry;
    std::vector<const TensorType*> types;
    for (const auto id : launch.reads()) types.push_back(&list.values[static_cast<std::size_t>(id)].type);
    const TensorType& out = list.values[static_cast<std::size_t>(launch.writes().at(0))].type;
    if (entry == "conv2d_nhwc") convolutions.push_back(conv2d_nhwc_geometry(types, launch.attrs, out));
    if (entry == "linear" && computes_in_bf16(launch.attrs, "linear")) {
      const std::int64_t n = types[1]->shape[0], k = types[1]->shape[1];
      linear_bf16 = std::max(linear_bf16, linear_bf16_workspace_bytes(types[0]->numel() / k, n, k, types.size() == 3));
    }
    if (entry == "linear" && holds_weights_in_f16(launch.attrs, "linear")) {
      linear_f16 = std::max(linear_f16, static_cast<std::uint64_t>(types[1]->numel()) * sizeof(float));
    }
    if (entry == "attention" && computes_in_bf16(launch.attrs, "attention")) {
      const Shape &q = types[0]->shape, &v = types[2]->shape;
      attention_bf16 = std::max(attention_bf16, attention_bf16_workspace_bytes({q[0] * q[1], q[2], v[2], q[3], v[3]}));
    }
  }
  need.workspace = conv_workspace_bytes(convolutions) + linear_bf16 + linear_f16 + attention_bf16 + kWorkspaceMargin;
  return need;
}

namespace {

// The kernels' OpenMP team, each of its threads with its allocator arena (glibc reserves 64 MiB of
// address space for a thread's arena when the thread first allocates), and one spare arena that
// the next helper thread (the weight cache's prefetch or writer) takes over: made before the first
// check reads the memory available, since they stay for the whole process and a check made before
// them counted on space they take later (an AVX2 machine's decode was refused after denoising).
void bring_up_kernel_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
#pragma omp parallel
    {
      void* volatile block = std::malloc(64);
      std::free(block);
    }
    std::thread([] {
      void* volatile block = std::malloc(64);
      std::free(block);
    }).join();
  });
}

std::uint64_t reserved(MemoryCheckTime when) { return when == MemoryCheckTime::kBeforeRun ? kRunGrowthAllowance : 0; }

}  // namespace

bool memory_fits(const MemoryNeed& need) {
  bring_up_kernel_threads();
  const std::optional<std::uint64_t> available = available_memory_bytes();
  return !available || need.total() + reserved(MemoryCheckTime::kBeforeRun) <= *available;
}

void require_memory(const runtime::LaunchList& list, const MemoryNeed& need, MemoryCheckTime when) {
  bring_up_kernel_threads();
  std::optional<std::uint64_t> available = available_memory_bytes();
  if (available) *available -= std::min(*available, reserved(when));
  if (!available || need.total() <= *available) return;
  std::string inputs;
  for (const auto id : list.inputs) {
    inputs += (inputs.empty() ? "" : ", ") + shape_to_string(list.values[static_cast<std::size_t>(id)].type.shape);
  }
  throw Error("engine", list.symbol + " for inputs " + inputs + " needs about " + gibibytes_text(need.total()) +
                            " (intermediates " + gibibytes_text(need.intermediates) + ", weights " +
                            gibibytes_text(need.weights) + ", workspace " + gibibytes_text(need.workspace) +
                            "); this machine has " + gibibytes_text(*available) + " available (choose a smaller size)");
}

}  // namespace websd::cpu
