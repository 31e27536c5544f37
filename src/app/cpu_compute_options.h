// `--dtype f32|f16|bf16` of the commands that run a checkpoint on the CPU (generate, bench): the type
// convolutions, linear layers and attention compute in. bf16 halves their weights and, on CPUs with native bf16
// (AVX512-BF16 or AMX), runs oneDNN's bf16 kernels with f32 accumulation; a CPU without it keeps f32 and says why.
// f16 computes in f32 over convolution and linear weights held in f16 (half their memory on any CPU), widened for
// each call. `websd build --target cpu --dtype bf16|f16` makes the same choice (cpu_compute_dtype).
// Not thread-safe (CLI setup).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/dtype.h"

namespace websd::app {

struct CpuComputeOptions {
  std::string dtype = "f32";
  bool given = false;  // --dtype was on the command line
};

void add_cpu_compute_option(CLI::App& command, CpuComputeOptions& options);

// The type convolutions, linear layers and attention compute in for `requested` (f32, f16 or bf16; throws
// websd::Error naming any other): bf16 only where this CPU runs it natively, else f32 with a line on stderr saying
// why; f16 (f16-held weights) with a line saying what it means.
DType cpu_compute_dtype(const std::string& requested, const std::string& command);

}  // namespace websd::app
