// Shared helpers of the codegen tests: kernel specs from program text, random CPU tensors (through
// CpuTensor's public accessors only), the interpreter kernel as the reference, and a compiled
// kernel library in a fresh temporary folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "targets/cpu/codegen/cpu_kernel_source.h"
#include "targets/cpu/codegen/shared_library_compiler.h"
#include "targets/cpu/runtime/cpu_tensor.h"
#include "core/attributes.h"

namespace websd::test {

// A kernel spec over f32 operands; `program` is parsed against the inputs and constants.
codegen::CpuKernelSpec kernel_spec(const std::string& name, const std::string& program,
                                   const std::vector<double>& constants, const std::vector<Shape>& inputs,
                                   const Shape& output);
// The attributes of a fused_elementwise node computing `spec`.
Attrs fused_attrs(const codegen::CpuKernelSpec& spec);

// f32 tensor of normal(0, scale) values, or of |normal| + 0.01 when `positive`.
cpu::CpuTensor random_cpu_tensor(const Shape& shape, std::uint32_t seed, float scale = 1.0f, bool positive = false);
std::vector<float> tensor_values(const cpu::CpuTensor& tensor);

// Runs the CPU target's kernel for `op` (e.g. "fused_elementwise") once.
cpu::CpuTensor run_cpu_kernel(const std::string& op, const std::vector<const cpu::CpuTensor*>& inputs,
                              const Attrs& attrs, const TensorType& output);

// Generates and compiles `kernels` into <fresh temp dir>/<stem>.so; returns the library path.
std::string build_kernel_library(const std::vector<codegen::CpuKernelSpec>& kernels, const std::string& stem,
                                 const codegen::SharedLibraryOptions& options = {});

// Runs argv[0] (looked up on PATH) with `argv` and no shell; returns its standard output, or
// nullopt when it cannot be started or exits non-zero.
std::optional<std::string> run_program(const std::vector<std::string>& argv);

// |actual - expected| <= tolerance * max(1, |expected|) everywhere (NaN only where expected is NaN);
// returns how many elements differ at all.
std::size_t expect_close(const std::vector<float>& actual, const std::vector<float>& expected, double tolerance,
                         const std::string& what);

}  // namespace websd::test
