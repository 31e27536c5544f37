#include "targets/cpu/runtime/cpu_memory_check.h"

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/system_memory.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_conv.h"

namespace websd::cpu {

MemoryNeed cpu_memory_need(const runtime::LaunchList& list, bool weights_to_load) {
  // Other kernels' transient buffers (attention blocks, im2col of GEMM kernels) stay below this.
  constexpr std::uint64_t kWorkspaceMargin = 512ull << 20;
  MemoryNeed need;
  need.intermediates = static_cast<std::uint64_t>(list.memory.total_bytes());
  if (weights_to_load) {
    for (const runtime::LaunchWeight& weight : list.weights) {
      need.weights += static_cast<std::uint64_t>(shape_numel(weight.type.shape)) * sizeof(float);
    }
  }
  std::vector<ConvGeometry> convolutions;
  for (const runtime::Launch& launch : list.launches) {
    if (list.kernel_of(launch).entry != "conv2d_nhwc") continue;
    std::vector<const TensorType*> types;
    for (const auto id : launch.reads()) types.push_back(&list.values[static_cast<std::size_t>(id)].type);
    const TensorType& out = list.values[static_cast<std::size_t>(launch.writes().at(0))].type;
    convolutions.push_back(conv2d_nhwc_geometry(types, launch.attrs, out));
  }
  need.workspace = conv_workspace_bytes(convolutions) + kWorkspaceMargin;
  return need;
}

bool memory_fits(const MemoryNeed& need) {
  const std::optional<std::uint64_t> available = available_memory_bytes();
  return !available || need.total() <= *available;
}

void require_memory(const runtime::LaunchList& list, const MemoryNeed& need) {
  const std::optional<std::uint64_t> available = available_memory_bytes();
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
