// The CPU target: this machine's x86-64 CPU through the cpu/ kernels (oneDNN convolutions and GEMM,
// fused norms and attention) and fused elementwise groups generated as C++ and compiled into
// kernels/cpu_kernels.so. Its convolution weights are packed for the oneDNN kernels of the CPU
// that builds, so a CPU artifact runs on CPUs with the same kernel layouts (recorded as the device).
#pragma once

#include "compiler/target.h"

namespace websd::compiler {

class CpuTarget : public Target {
 public:
  std::string name() const override;
  std::string summary() const override;
  bool supports(const std::string& op) const override;
  passes::Pipeline pass_list(const PassListHooks& hooks) const override;
  passes::MemoryLimits memory_limits() const override;
  std::vector<passes::NodeLaunch> lower_node(const graph::Function& function, const graph::Node& node,
                                             const std::string& tier) const override;
  std::optional<WeightLayout> weight_layout(const graph::Function& function, graph::ValueId id) const override;
  GeneratedKernels generate_kernels(const graph::Module& compiled, const KernelBuildOptions& options,
                                    const std::function<void(const std::string&)>& progress) const override;
  std::string device_name() const override;
  std::vector<std::pair<std::string, std::vector<std::byte>>> runtime_files() const override;
  nlohmann::json device_requirements(const std::vector<runtime::LaunchList>& lists,
                                     const std::string& tier) const override;
};

const CpuTarget& cpu_target();

}  // namespace websd::compiler
