// C++ code generation for the CPU target: the fused_elementwise nodes of a graph (see
// graph/fused_program.h) become ONE self-contained C++17 translation unit (it embeds the C ABI of
// targets/cpu/runtime/kernel_abi.h and includes only C standard headers) that compiles into a kernel library:
//   - per kernel an exported `extern "C" int websd_kernel_<name>(const float* const* inputs,
//     float* output, websd_parallel_for_fn parallel_for, void* pool)` with the shapes and
//     broadcast strides compiled in; its work is rows of the innermost merged dimension, cut into
//     tiles of 4096 elements and handed to `parallel_for`; what depends only on broadcast operands
//     is computed once per row, and the inner loop is straight-line float32 code per element,
//     written for -O3 auto-vectorisation (exp, sigmoid, SiLU,
//     GELU and QuickGELU as branch-free polynomials, the same ones as cpu/vector_math.cpp, so with
//     FMA hardware (-march=native) results equal the interpreter's bit for bit; sigmoid uses that
//     polynomial exp where the interpreter calls expf: a few ulp apart; sin, cos and tanh call
//     libm and keep their loop scalar);
//     Kernels with the same program, constants and shapes share one compiled body;
//   - `websd_kernel_library_manifest()`, returning the JSON of cpu_kernel_manifest().
// Everything else has internal linkage. Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "graph/function.h"
#include "graph/module.h"
#include "ops/fused_program.h"

namespace websd::codegen {

// One kernel to generate: a fused_elementwise node's `kernel` name, program and operand types.
struct CpuKernelSpec {
  std::string name;
  ops::FusedProgram program;
  std::vector<TensorType> inputs;
  TensorType output;
};

// The specs of every fused_elementwise node of `function` (or of each function of `module`, in
// order), in node order.
std::vector<CpuKernelSpec> cpu_kernel_specs(const graph::Function& function);
std::vector<CpuKernelSpec> cpu_kernel_specs(const graph::Module& module);

// The library manifest: {"websd_version": "...", "abi": 1, "target": "cpu", "kernels":
// [{"name": "...", "inputs": [[d0, ...], ...], "output": [d0, ...]}, ...]}.
std::string cpu_kernel_manifest(const std::vector<CpuKernelSpec>& kernels);

// The translation unit described above. Throws websd::Error("codegen") naming the kernel for an
// invalid or duplicate name, a non-float operand, inputs that do not broadcast to the output, or a
// program that reads more inputs than the kernel has.
std::string cpu_kernel_source(const std::vector<CpuKernelSpec>& kernels);

// Kernel `name`'s part of a translation unit cpu_kernel_source wrote: its entry point and the range
// function that entry calls (several kernels of one body share it). Throws websd::Error("inspect")
// when `source` has no such kernel.
std::string cpu_kernel_source_of(const std::string& source, const std::string& name);

}  // namespace websd::codegen
