#include "targets/device_registry.h"

#include "core/error.h"
#include "core/message_text.h"

#if WEBSD_TARGET_CPU
#include "targets/cpu/runtime/cpu_arch.h"
#include "targets/cpu/runtime/cpu_device.h"
#include "targets/cpu/runtime/cpu_memory_check.h"
#endif
#if WEBSD_TARGET_WEBGPU
#include "targets/webgpu/runtime/webgpu_device.h"
#endif

namespace websd::targets {

const std::vector<DeviceTarget>& device_targets() {
  static const std::vector<DeviceTarget> targets = {
#if WEBSD_TARGET_CPU
    {"cpu", "this machine's CPU (oneDNN and generated kernels)", [] { return std::make_unique<cpu::CpuDevice>(); },
     [](const runtime::LaunchList& list, bool weights_to_load, bool before_run) {
       cpu::require_memory(list, cpu::cpu_memory_need(list, weights_to_load),
                           before_run ? cpu::MemoryCheckTime::kBeforeRun : cpu::MemoryCheckTime::kAtLoad);
     },
     [](const runtime::LaunchList& list) { return cpu::memory_fits(cpu::cpu_memory_need(list, true)); },
     [](const nlohmann::json& requirements, const std::string& artifact_dir) {
       const auto arch = requirements.find("cpu_arch");
       if (arch == requirements.end() || !arch->is_string()) return;  // built before websd recorded it: x86-64
       const std::string refusal = cpu::cpu_arch_refusal(arch->get<std::string>());
       if (!refusal.empty()) throw Error("artifact", artifact_dir + ": " + refusal);
     }},
#endif
#if WEBSD_TARGET_WEBGPU
    {"webgpu",
     "the GPU behind the page's WebGPU bridge (web/bridge)",
     [] { return std::make_unique<webgpu::WebGpuDevice>(); },
     {},   // no host-memory check: a GPU allocation that fails is reported by the bridge
     {},   // decodes are tiled only when asked (--vae-tiling on)
     {}},  // the bridge checks the adapter against the requirements
#endif
  };
  return targets;
}

std::vector<std::string> device_target_names() {
  std::vector<std::string> names;
  for (const DeviceTarget& target : device_targets()) names.push_back(target.name);
  return names;
}

std::unique_ptr<runtime::Device> open_device(const std::string& target) { return device_target(target).open(); }

const DeviceTarget& device_target(const std::string& target) {
  std::string known;
  for (const DeviceTarget& entry : device_targets()) {
    if (entry.name == target) return entry;
    known += (known.empty() ? "" : "; ") + entry.name + " (" + entry.summary + ")";
  }
  throw Error("artifact", "no device for target '" + message_safe(target) + "' in this websd; it runs " +
                              (known.empty() ? std::string("no target (built without any)") : known));
}

}  // namespace websd::targets
