// A generated CPU kernel library (.so, see targets/cpu/runtime/kernel_abi.h) opened with dlopen: its embedded
// manifest parsed and checked (ABI version, target "cpu"), every listed kernel's entry point looked
// up, and kernels run with the CPU target's thread pool (parallel.h). Loading fails with one line
// (websd::Error "artifact") for each way a library can be wrong: file missing, not loadable (with
// the dynamic loader's dlerror text, which names a missing dependency), no manifest symbol (not a
// websd kernel library), unreadable manifest, other ABI version or target, a listed kernel whose
// symbol is missing. Running checks operand counts and shapes against the manifest ("cpu").
// The library stays loaded while its KernelLibrary lives (move-only; dlclose on destruction).
// After open, all members are const and thread-safe; kernels may run concurrently.
#pragma once

#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "targets/cpu/runtime/cpu_tensor.h"
#include "targets/cpu/runtime/kernel_abi.h"

namespace websd::cpu {

struct LibraryKernel {
  std::string name;           // the fused node's `kernel` attribute
  std::vector<Shape> inputs;  // operand shapes, in the node's input order
  Shape output;
  websd_kernel_fn entry = nullptr;
};

class KernelLibrary {
 public:
  // Opens `path` (RTLD_NOW | RTLD_LOCAL). Throws websd::Error("artifact", ...) as described above.
  static KernelLibrary open(const std::string& path);

  KernelLibrary(KernelLibrary&& other) noexcept;
  KernelLibrary& operator=(KernelLibrary&& other) noexcept;
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;
  ~KernelLibrary();

  const std::string& path() const { return path_; }
  const std::string& websd_version() const { return websd_version_; }  // of the websd that built it
  const std::vector<LibraryKernel>& kernels() const { return kernels_; }
  // nullptr when the manifest lists no kernel `name`.
  const LibraryKernel* find(const std::string& name) const;
  // Like find, but throws websd::Error("artifact") naming the library and the kernel.
  const LibraryKernel& kernel(const std::string& name) const;

  // Runs `kernel` on raw float32 buffers of the manifest's shapes (count checked, shapes trusted).
  void run(const LibraryKernel& kernel, const std::vector<const float*>& inputs, float* output) const;
  // Runs `kernel` on CPU tensors, checking each operand's shape (any float dtype: stored as f32).
  void run(const LibraryKernel& kernel, const std::vector<const CpuTensor*>& inputs, CpuTensor& output) const;

 private:
  KernelLibrary() = default;

  std::string path_;
  void* handle_ = nullptr;
  std::string websd_version_;
  std::vector<LibraryKernel> kernels_;
};

}  // namespace websd::cpu
