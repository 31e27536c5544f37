// The fused kernels of a real network: the tiny fixture UNet, compiled for the CPU target (or with
// every composite lowered) and fused, gives a set of fused_elementwise nodes; all of them become
// one generated library whose kernels match the interpreter on random operands.
#include <gtest/gtest.h>

#include "codegen_test_support.h"
#include "models/graphs/sd_graphs.h"
#include "models/unet_config.h"
#include "passes/channels_last.h"
#include "passes/fuse_conv_residual.h"
#include "passes/fuse_elementwise.h"
#include "passes/fuse_norm_activation.h"
#include "passes/lower_composites.h"
#include "passes/verify.h"
#include "support/fixtures.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/kernel_library.h"

namespace websd::test {
namespace {

// Compiles every fused kernel of `fused` into one library and compares each with the interpreter.
void expect_library_matches_interpreter(const graph::Function& fused, const std::string& stem) {
  passes::verify(fused);
  const auto specs = codegen::cpu_kernel_specs(fused);
  ASSERT_GT(specs.size(), 20u);
  const std::string dir = make_temp_dir(stem);
  const auto build = codegen::compile_shared_library(codegen::cpu_kernel_source(specs), dir + "/" + stem + ".so");
  EXPECT_GT(build.compile_seconds, 0.0);
  const cpu::KernelLibrary library = cpu::KernelLibrary::open(build.library_path);
  ASSERT_EQ(library.kernels().size(), specs.size());
  std::uint32_t seed = 1;
  for (const codegen::CpuKernelSpec& spec : specs) {
    std::vector<cpu::CpuTensor> inputs;
    for (const auto& type : spec.inputs) inputs.push_back(random_cpu_tensor(type.shape, seed++));
    std::vector<const cpu::CpuTensor*> operands;
    for (const auto& input : inputs) operands.push_back(&input);
    const cpu::CpuTensor expected = run_cpu_kernel("fused_elementwise", operands, fused_attrs(spec), spec.output);
    cpu::CpuTensor actual = cpu::CpuTensor::allocate(spec.output);
    library.run(library.kernel(spec.name), operands, actual);
    expect_close(tensor_values(actual), tensor_values(expected), 1e-6,
                 spec.name + " " + ops::fused_program_text(spec.program.code));
  }
}

graph::Function tiny_unet() {
  return unet_graph(unet_config_read(fixture_path("tiny-sd15/model/unet/config.json")), 2, 16, 16, 77);
}

TEST(UNetKernelLibrary, KernelsAfterTheCpuPassesMatchTheInterpreter) {
  const graph::Function lowered =
      passes::lower_composites(tiny_unet(), [](const std::string& op) { return cpu::cpu_supports(op); });
  expect_library_matches_interpreter(passes::fuse_elementwise(passes::fuse_norm_activation(
                                         passes::fuse_conv_residual(passes::to_channels_last(lowered)))),
                                     "unet-cpu-kernels");
}

// Every composite lowered: the norms' and activations' long chains become the kernels.
TEST(UNetKernelLibrary, KernelsOfTheFullyLoweredUNetMatchTheInterpreter) {
  const graph::Function lowered = passes::lower_composites(tiny_unet(), [](const std::string&) { return false; });
  expect_library_matches_interpreter(passes::fuse_elementwise(lowered), "unet-primitive-kernels");
}

}  // namespace
}  // namespace websd::test
