// The webgpu target's runtime::Device, built to WebAssembly: every call goes to the JavaScript
// GpuBridge (web/bridge/websd_gpu.mjs) through the functions of webgpu_bridge_imports.h, with
// integer handles and pointers into wasm memory. The bridge owns the GPUDevice; the embedding JS
// creates it and passes it to the module factory as `websdGpu` before opening this device.
//
// Storage: f32 and i32 values (DeviceLimits::value_dtypes), and f16 weights where the adapter
// offers shader-f16; each weight is held in the dtype its launch list names (the tier's kernels'),
// converted at import where the artifact stores it otherwise (f16/bf16 widened, f32 narrowed).
// upload is writeBuffer (the source has been read when it returns); download enqueues a read whose
// bytes the bridge writes into wasm memory once the GPU is done; prepare creates one kernel per
// kernel of the list from its WGSL file (compiled in the background: pending work), once per
// device: a kernel of the same file, entry point and layout in another list (unet and unet_cfg,
// another image size, the executor after the check at open) reuses its pipeline, and pipelines
// live as long as the device (they are small; compiling is what costs); bind creates the bridge
// program (bind groups and uniforms made once); submit is one runProgram and a flush. Each
// launch's bindings are checked at bind against WebGPU's rule for one dispatch: a buffer is bound
// either read-only or writable (never both), and writable ranges do not overlap.
//
// Never blocks (wasm in a browser cannot): wait() returns only when poll() says everything is
// done and otherwise throws websd::Error; JavaScript awaits the bridge's settled() between the
// calls that enqueue work and the calls that use its results. A submit made while the program's
// kernels still compile is queued by the bridge behind them, with every command after it, as
// Device::prepare promises. LaunchTimes (profiles) come from GPU timestamps, each launch in its
// own compute pass, where the adapter offers 'timestamp-query' (else they stay empty);
// LaunchProgress is not reported (the launches run on the GPU). Every JS exception of a bridge call,
// including GPU errors the bridge keeps until the next poll, becomes websd::Error("webgpu") with
// the bridge's message. Not thread-safe (nor is the bridge): one thread, the module's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace websd::webgpu {

class WebGpuDevice final : public runtime::Device {
 public:
  // Reads the bridge's limits and features. Throws websd::Error("webgpu") when the module has no
  // bridge.
  WebGpuDevice();
  ~WebGpuDevice() override;
  WebGpuDevice(const WebGpuDevice&) = delete;
  WebGpuDevice& operator=(const WebGpuDevice&) = delete;

  // "webgpu (<adapter description>)".
  std::string name() const override { return name_; }
  const runtime::DeviceLimits& limits() const override { return limits_; }
  runtime::BufferPtr allocate(std::uint64_t bytes) override;
  runtime::BufferPtr import_weight(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data) override;
  void upload(const runtime::BufferRange& to, std::span<const std::byte> from) override;
  void download(const runtime::BufferRange& from, std::span<std::byte> to) override;
  void copy(const runtime::BufferRange& from, const runtime::BufferRange& to) override;
  std::unique_ptr<runtime::DeviceProgram> prepare(const runtime::LaunchList& list,
                                                  const runtime::KernelFileResolver& files) override;
  void bind(runtime::DeviceProgram& program, const std::vector<runtime::BufferRange>& values) override;
  void submit(runtime::DeviceProgram& program, runtime::LaunchTimes* times,
              const runtime::LaunchProgress* progress) override;
  // Throws websd::Error("webgpu") unless poll() is true: the caller awaits settled() first.
  void wait() override;
  // Flushes gathered commands, then asks the bridge (non-blocking); throws the GPU errors it kept.
  bool poll() override;

 private:
  std::string name_;
  runtime::DeviceLimits limits_;
  std::map<std::string, int> kernels_;  // bridge kernel handles by file, entry point and layout
};

}  // namespace websd::webgpu
