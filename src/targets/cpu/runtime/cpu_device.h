// The CPU target's runtime::Device: buffers are aligned host memory, upload/download/copy are
// memcpy, and a program runs each launch synchronously on the calling thread (kernels use the
// machine's threads themselves) through the CPU kernels (cpu_kernels.h) or, for `file` kernels,
// the entry points of a generated kernel library (kernel_library.h) opened once per file.
//
// Floats are stored as f32 and integers as i64 (DeviceLimits::value_dtypes); weights in f16/bf16
// are widened once at import, f32 weights are adopted in place (the source's owner keeps them),
// except convolution weights packed for a bf16 kernel, which are held as bf16.
// Before a program is made, every built-in launch's operand types are checked against the op's
// type inference and every packed convolution weight against the layout this CPU's kernel wants,
// so an edited launch list fails at load instead of letting a kernel read past its operands.
// Not thread-safe: one submit at a time.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/device.h"

namespace websd::cpu {

class KernelLibrary;

class CpuDevice final : public runtime::Device {
 public:
  CpuDevice();
  ~CpuDevice() override;

  std::string name() const override { return "cpu"; }
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
  void wait() override {}
  bool poll() override { return true; }  // every call completes before it returns
  // release_cpu_kernel_caches().
  void trim() override;

  // The host address of a range of one of this device's buffers.
  static std::byte* address(const runtime::BufferRange& range);

 private:
  runtime::BufferPtr import_bf16_packed(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data);
  runtime::BufferPtr import_f16_packed(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data);

  runtime::DeviceLimits limits_;
  std::map<std::string, std::shared_ptr<const KernelLibrary>> libraries_;  // by local path
};

// Releases the oneDNN kernels' cached primitives and scratch (convolutions, bf16 linear layers and
// attention; the calling thread's buffers) and returns the heap's free pages to the system (glibc
// keeps freed memory mapped otherwise): CpuDevice::trim, and for callers that hold no device.
void release_cpu_kernel_caches();

}  // namespace websd::cpu
