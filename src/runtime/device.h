// What every target's run side implements (in the spirit of IREE's HAL and ggml's backend
// interface): limits, buffers, upload/download/copy, programs prepared from a launch list, submit,
// wait, and per-launch timing. runtime::Executor (executor.h) runs any function's launch list on
// any Device; targets live in their own folders (the CPU's: src/targets/cpu/runtime/cpu_device.h).
//
// Ordering and completion: upload, download, copy and submit are executed in the order they are
// called, and may complete later; download's host bytes are valid only once the device has
// finished (wait() returned, or poll() returned true), so a device that reads back asynchronously
// (WebGPU's mapAsync) implements it without blocking. Who waits chooses how: wait() blocks (the
// CLI); poll() never blocks, so a caller that must not block (wasm in a browser, which awaits the
// GPU in JavaScript between its calls into the runtime) polls between awaits and calls wait() only
// once poll() said true. What a call reads from the host it has read when it returns (upload's
// source, import_weight's bytes: reuse them at once); what it writes to the host (download's
// destination) must stay valid until the device has finished. A program and the buffers it is
// bound to stay alive while submits of it are pending (the Executor's owner waits before dropping
// it). Errors are websd::Error naming the device. A Device and its buffers/programs are used from
// one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "runtime/launch_list.h"

namespace websd::runtime {

struct DeviceLimits {
  std::uint64_t max_buffer_bytes = 0;   // one allocation
  std::uint64_t max_binding_bytes = 0;  // one binding of a launch (WebGPU: maxStorageBufferBindingSize)
  std::uint64_t offset_alignment = 1;   // of a binding's offset into its buffer
  // The dtypes arenas and input/output slots hold natively: the executor refuses a launch list with
  // any other value dtype at load, since its sizes and offsets were computed for that dtype.
  std::vector<DType> value_dtypes;
  bool shader_f16 = false;  // kernels may compute in f16
  // Kernel limits of GPU devices (0: none, host devices): storage bindings of one kernel, threads of
  // one workgroup, workgroups of a dispatch in each dimension.
  std::uint64_t max_storage_buffers_per_stage = 0;
  std::uint64_t max_invocations_per_workgroup = 0;
  std::uint64_t max_workgroups_per_dimension = 0;
  // import_weight may adopt the source's bytes in place (a device that addresses host memory):
  // they must then outlive the buffer. Otherwise a weight source may drop them once imported.
  bool adopts_weight_bytes = false;
};

// Memory the device owns (or adopted, see Device::import_weight). Freed when the last owner drops it.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual std::uint64_t bytes() const = 0;
};
using BufferPtr = std::shared_ptr<DeviceBuffer>;

// A byte range of a buffer: where a value lives, or what to copy.
struct BufferRange {
  DeviceBuffer* buffer = nullptr;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

// A weight's bytes as its source holds them (in the launch weight's layout), and the owner that
// keeps them valid (may be null when the source outlives every executor bound to it).
struct WeightBytes {
  std::span<const std::byte> bytes;
  DType dtype = DType::kF32;
  std::shared_ptr<const void> owner;
};

// A launch list made ready to run on one device: kernels looked up or compiled, launches recorded.
class DeviceProgram {
 public:
  virtual ~DeviceProgram() = default;
};

// A kernel file the artifact carries, as a device loads it: its bytes, checked against the
// manifest, which every device can use (WGSL text, PTX); and its path on this machine where the
// artifact's source has one (a local folder), for a device that can only load a file by name (the
// CPU's dlopen of its kernel library). In a browser there is no path.
struct KernelFile {
  std::vector<std::byte> bytes;
  std::optional<std::string> local_path;
};

// Maps a kernel table's `file` (an artifact path) to that file. Throws websd::Error when the
// artifact has no such file or it fails its checks.
using KernelFileResolver = std::function<KernelFile(const std::string& artifact_path)>;

// Seconds per launch of one submit, filled by wait().
struct LaunchTimes {
  std::vector<double> seconds;
};

// Told as a submit's launches finish: (launches done, launches in the submit). For progress within a
// long submit (a UNet step of many seconds); called on the submitting thread, so it must be cheap.
using LaunchProgress = std::function<void(std::size_t done, std::size_t total)>;

class Device {
 public:
  virtual ~Device() = default;

  virtual std::string name() const = 0;
  virtual const DeviceLimits& limits() const = 0;

  // Throws websd::Error naming the size when the device cannot allocate it.
  virtual BufferPtr allocate(std::uint64_t bytes) = 0;
  // A buffer holding `weight` as this device's kernels read it: the bytes converted to the device's
  // storage dtype, or adopted in place (no copy, data.owner kept) where the device can address host
  // memory. Otherwise the bytes have been read when it returns (a weight source may drop them):
  // weights stream through without waiting, their upload is enqueued work.
  virtual BufferPtr import_weight(const LaunchWeight& weight, const WeightBytes& data) = 0;
  // Enqueues a write of `from` into `to`; `from` has been read when it returns.
  virtual void upload(const BufferRange& to, std::span<const std::byte> from) = 0;
  // Enqueues a read of `from` into `to` (to.size() == from.bytes), filled once the device has
  // finished (see above); `to` must stay valid until then.
  virtual void download(const BufferRange& from, std::span<std::byte> to) = 0;
  virtual void copy(const BufferRange& from, const BufferRange& to) = 0;

  // Checks that the device runs every kernel of `list` (built-ins by entry name, file kernels
  // through `files`) and prepares them. Throws websd::Error("artifact") naming the function and
  // the first kernel it cannot run. A device may finish compiling its pipelines in the background:
  // they count as enqueued work (poll(), wait()), and submits queue behind them.
  virtual std::unique_ptr<DeviceProgram> prepare(const LaunchList& list, const KernelFileResolver& files) = 0;
  // Fixes where each value lives (values[v] for value v) for every later submit: devices record
  // bind groups or graphs once, as fixed addresses allow.
  virtual void bind(DeviceProgram& program, const std::vector<BufferRange>& values) = 0;
  // Enqueues every launch of a bound program, in order; with `times`, each launch is timed. With
  // `progress`, a device that runs the launches as it submits them reports each one done (a device
  // that only enqueues may report nothing).
  virtual void submit(DeviceProgram& program, LaunchTimes* times, const LaunchProgress* progress) = 0;
  // Returns when everything enqueued has finished. A device that cannot block (WebGPU under
  // WebAssembly) throws websd::Error instead while work is pending: its callers poll() first.
  virtual void wait() = 0;
  // Whether everything enqueued has finished (downloads filled), without blocking; after true,
  // wait() returns at once. Devices whose work completes in the background report it; one that
  // completes work only when driven (tests' deferring device) advances it here.
  virtual bool poll() = 0;

  // Gives back memory the device keeps beyond its live buffers (the CPU's: convolution plans and
  // their scratch, freed heap pages), for a backend that has just dropped a network's executors.
  // Later work, queued or not, rebuilds what it needs.
  virtual void trim() {}
};

// The launch's operands, for profiles: "<kernel> <shapes of reads> -> <shapes of writes>", the
// kernel by its entry, or for a webgpu module named "<family>_<digest>:<entry>" by its family (and
// its entry when that differs and is not "main").
std::string launch_profile_key(const LaunchList& list, const Launch& launch);
// Its floating-point operations for profiles (GEMM-like kernels; 0 for the others).
double launch_flops(const LaunchList& list, const Launch& launch);

}  // namespace websd::runtime
