// The webgpu target: every computation as WGSL run through WebGPU, in a browser tab or
// under Node (Dawn). Kernels are the templates of src/targets/webgpu/kernels specialized per
// launch, plus generated fused elementwise and constant kernels (webgpu_lowering.h); convolution
// weights are repacked [O, KH, KW, C] for the implicit-GEMM template; intermediates live in arenas
// of at most 256 MiB (WebGPU's default maxBufferSize) at 256-byte offsets. What a device must offer
// beyond WebGPU's defaults (a binding larger than 128 MiB: SD 1.5's f32 token embedding) is
// listed in the manifest's `device_requirements` section, which the runtime requests from the
// adapter and refuses, naming the limit, when the adapter lacks it.
#pragma once

#include "compiler/target.h"

namespace websd::compiler {

class WebGpuTarget : public Target {
 public:
  std::string name() const override;
  std::string summary() const override;
  bool supports(const std::string& op) const override;
  passes::Pipeline pass_list(const PassListHooks& hooks) const override;
  passes::MemoryLimits memory_limits() const override;
  // f32 (the base: every adapter), f16, subgroup-matrix (webgpu_lowering.h).
  std::vector<TargetTier> tiers() const override;
  std::vector<passes::NodeLaunch> lower_node(const graph::Function& function, const graph::Node& node,
                                             const std::string& tier) const override;
  std::optional<WeightLayout> weight_layout(const graph::Function& function, graph::ValueId id) const override;
  GeneratedKernels generate_kernels(const graph::Module& compiled, const KernelBuildOptions& options,
                                    const std::function<void(const std::string&)>& progress) const override;
  std::string device_name() const override;
  // runtime/websd_web.{js,wasm} (the WebAssembly build's, from WEBSD_WEB_RUNTIME or the build
  // tree's default), runtime/bridge/websd_gpu.mjs, runtime/node/{node_gpu,websd_node,shard_prefetch}.mjs.
  std::vector<std::pair<std::string, std::vector<std::byte>>> runtime_files() const override;
  // {"limits": {WebGPU limit name: value}, "features": [...]}: every limit the launch lists reach
  // (at least WebGPU's default), so a runtime can request them all, and the tier's features.
  nlohmann::json device_requirements(const std::vector<runtime::LaunchList>& lists,
                                     const std::string& tier) const override;

 private:
  std::int64_t workspace_limit() const;
};

const WebGpuTarget& webgpu_target();

}  // namespace websd::compiler
