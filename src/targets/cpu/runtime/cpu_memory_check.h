// The memory a compiled function needs on the CPU device, and its refusal when the machine does not
// have it: both backends (a checkpoint compiled on the fly, a compiled artifact) check every network
// of a run before the first runs (DiffusionBackend::check_memory), and each network again before it
// allocates, so an absurd size fails with the figures instead of running into the kernel's OOM
// killer or std::bad_alloc minutes later. Pure functions of a launch list; thread-compatible (the
// workspace estimate builds convolution plans in the shared oneDNN cache).
#pragma once

#include <cstdint>

#include "runtime/launch_list.h"

namespace websd::cpu {

struct MemoryNeed {
  std::uint64_t intermediates = 0;  // the planned arenas
  std::uint64_t weights = 0;        // float32 weights still to load
  std::uint64_t workspace = 0;      // outside the arenas: convolution layout copies and scratch, a margin
  std::uint64_t total() const { return intermediates + weights + workspace; }
};

// What running `list` holds at its peak; its weights count (as float32) when `weights_to_load`.
MemoryNeed cpu_memory_need(const runtime::LaunchList& list, bool weights_to_load);

// What the networks that run earlier in a run leave in the process once released (their kernels'
// threads and allocator arenas exist before any check, oneDNN's JIT code is dropped between
// networks: measured 9-12 MiB for the fixture's networks on AVX2 and on AVX-512). A check made
// before the run keeps this much aside, so that the same function's check when it is loaded, after
// the others ran, cannot refuse what the first check let through.
inline constexpr std::uint64_t kRunGrowthAllowance = 64ull << 20;

enum class MemoryCheckTime {
  kBeforeRun,  // before the first network of a run (DiffusionBackend::check_memory, tiling's plan)
  kAtLoad,     // right before the function's own buffers are allocated
};

// Whether `need` fits in the memory available (io/system_memory.h) with kRunGrowthAllowance to
// spare (it is asked before a run); true where that cannot be read.
bool memory_fits(const MemoryNeed& need);

// Throws websd::Error("engine", "<symbol> for inputs <shapes> needs about X GiB (...); this machine
// has Y GiB available (choose a smaller size)") when `need` exceeds the memory available
// (io/system_memory.h: MemAvailable, the cgroup limit, `ulimit -v`), less kRunGrowthAllowance
// before a run.
void require_memory(const runtime::LaunchList& list, const MemoryNeed& need, MemoryCheckTime when);

}  // namespace websd::cpu
