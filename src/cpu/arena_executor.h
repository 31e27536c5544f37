// Runs an artifact's compiled function (a runtime::LaunchList) on the CPU: every intermediate lives
// in ONE arena laid out by the compiler's memory plan, launches run in order through the CPU
// kernels (or, for fused elementwise groups, the generated kernel library's entry points), and
// nothing is compiled or planned at load time. The arena is allocated on the first run and kept for
// later runs until release_arena(). Outputs are copied out of the arena, so they stay valid after
// the next run. Not thread-safe: one run at a time (kernels use the machine's threads themselves).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "cpu/cpu_tensor.h"
#include "cpu/op_profile.h"
#include "runtime/launch_list.h"

namespace websd::cpu {

class KernelLibrary;

class ArenaExecutor {
 public:
  // `library` (may be nullptr when no launch names a generated kernel) must outlive the executor.
  // Throws websd::Error for a launch whose kernel this CPU target or the library lacks.
  ArenaExecutor(runtime::LaunchList list, const KernelLibrary* library);
  ~ArenaExecutor();
  ArenaExecutor(const ArenaExecutor&) = delete;
  ArenaExecutor& operator=(const ArenaExecutor&) = delete;

  const runtime::LaunchList& launch_list() const { return list_; }

  // Supplies each weight's float32 values (in `weight.layout` when that is set; a view into
  // memory the caller keeps alive, or owned storage). Checks that every packed convolution weight
  // is in the layout this CPU's kernel wants (else: rebuild the artifact on this machine).
  using WeightBinder = std::function<CpuTensor(const runtime::LaunchWeight& weight)>;
  void bind_weights(const WeightBinder& binder);
  void release_weights() { weights_.clear(); }

  // Inputs in the list's input order with exactly the listed types.
  std::vector<CpuTensor> run(const std::vector<CpuTensor>& inputs);
  // Frees the arena (the next run allocates it again).
  void release_arena();
  std::int64_t arena_bytes() const { return list_.arena_bytes; }

  // When set, every launch is timed into `profile` under "<kernel> <operand shapes>".
  void set_profile(OpProfile* profile) { profile_ = profile; }

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  using LaunchFn = std::function<void(const std::vector<const CpuTensor*>&, CpuTensor&)>;

  runtime::LaunchList list_;
  std::vector<LaunchFn> launch_fns_;      // parallel to list_.launches
  std::vector<std::string> profile_keys_;  // parallel to list_.launches
  std::vector<double> launch_flops_;       // parallel to list_.launches
  std::vector<CpuTensor> weights_;
  std::unique_ptr<std::byte[], FreeDeleter> arena_;
  OpProfile* profile_ = nullptr;
};

}  // namespace websd::cpu
