#include "app/cpu_compute_options.h"

#include <iostream>

#include "core/error.h"
#include "targets/cpu/runtime/bf16_attention.h"
#include "targets/cpu/runtime/bf16_support.h"

namespace websd::app {

void add_cpu_compute_option(CLI::App& command, CpuComputeOptions& options) {
  command
      .add_option("--dtype", options.dtype,
                  "What convolutions, linear layers and attention's products compute in on the CPU with --model: "
                  "f32; bf16 (half the weight memory; oneDNN's bf16 kernels with f32 accumulation, on CPUs with "
                  "AVX512-BF16 or AMX); or f16 (f32 over convolution and linear weights held in f16: half their "
                  "memory on any CPU, widened for each call)")
      ->capture_default_str()
      ->each([&options](const std::string&) { options.given = true; });
}

DType cpu_compute_dtype(const std::string& requested, const std::string& command) {
  if (requested == "f32") return DType::kF32;
  if (requested == "f16") {
    std::cerr << "websd " << command
              << ": convolution and linear weights held in f16 (half their memory), widened to f32 for each call; "
                 "everything computes in f32\n";
    return DType::kF16;
  }
  if (requested != "bf16") {
    throw Error(command, "--dtype " + requested + ": unknown compute type (use f32, f16 or bf16)");
  }
  if (cpu::onednn_bf16_available()) {
    std::cerr << "websd " << command
              << (cpu::bf16_attention_pays()
                      ? ": convolutions, linear layers and attention compute in bf16 (f32 accumulation)\n"
                      : ": convolutions and linear layers compute in bf16 (f32 accumulation); attention in f32, "
                        "which is faster on this CPU\n");
    return DType::kBF16;
  }
  std::cerr << "websd " << command
            << ": --dtype bf16: this CPU has no native bf16 (AVX512-BF16 or AMX), so convolutions, linear layers "
               "and attention compute in f32\n";
  return DType::kF32;
}

}  // namespace websd::app
