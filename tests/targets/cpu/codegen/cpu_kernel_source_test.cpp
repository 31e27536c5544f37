// cpu_kernel_source: one self-contained translation unit with an entry point per kernel and the
// manifest; specs read from a graph's fused nodes; invalid specs rejected by name.
#include "targets/cpu/codegen/cpu_kernel_source.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "codegen_test_support.h"
#include "core/error.h"
#include "graph/function_builder.h"
#include "passes/fuse_elementwise.h"

namespace websd::codegen {
namespace {

std::vector<CpuKernelSpec> two_kernels() {
  return {test::kernel_spec("k_bias_silu", "in0 in1 add silu", {}, {{2, 3, 8}, {8}}, {2, 3, 8}),
          test::kernel_spec("k_clamp", "in0 c0 max c1 min", {-1.0, 2.5}, {{5}}, {5})};
}

std::string error_of(const std::vector<CpuKernelSpec>& kernels) {
  try {
    cpu_kernel_source(kernels);
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(CpuKernelSource, IsOneSelfContainedUnitWithAnEntryPointPerKernel) {
  const std::string source = cpu_kernel_source(two_kernels());
  std::istringstream lines(source);
  std::size_t includes = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#include", 0) != 0) continue;
    ++includes;
    EXPECT_TRUE(line == "#include <math.h>" || line == "#include <stdint.h>" || line == "#include <string.h>") << line;
  }
  EXPECT_GE(includes, 3u);
  EXPECT_NE(source.find("#define WEBSD_KERNEL_ABI_VERSION 1"), std::string::npos);  // the ABI, embedded
  EXPECT_NE(source.find("WEBSD_EXPORT int websd_kernel_k_bias_silu(const float* const* inputs"), std::string::npos);
  EXPECT_NE(source.find("WEBSD_EXPORT int websd_kernel_k_clamp("), std::string::npos);
  EXPECT_NE(source.find("WEBSD_EXPORT const char* websd_kernel_library_manifest(void)"), std::string::npos);
  // Shapes are compiled in: the bias is read with a row stride of 0 and the rows are 8 long.
  EXPECT_NE(source.find("args->output + row * 8"), std::string::npos);
  EXPECT_NE(source.find("websd_silu("), std::string::npos);
}

TEST(CpuKernelSource, IdenticalKernelsShareOneBody) {
  auto kernels = two_kernels();
  kernels.push_back(kernels[0]);
  kernels.back().name = "k_bias_silu_again";
  const std::string source = cpu_kernel_source(kernels);
  EXPECT_NE(source.find("websd_kernel_k_bias_silu_again("), std::string::npos);
  std::size_t bodies = 0;
  for (std::size_t at = source.find("static void websd_range_"); at != std::string::npos;
       at = source.find("static void websd_range_", at + 1)) {
    ++bodies;
  }
  EXPECT_EQ(bodies, 2u);
  kernels.back().program.constants.push_back(1.0f);  // a different kernel now, if only by a constant
  kernels.back().program.code.push_back({ops::FusedOpcode::kConstant, 0});
  kernels.back().program.code.push_back({ops::FusedOpcode::kMul, 0});
  const std::string distinct = cpu_kernel_source(kernels);
  bodies = 0;
  for (std::size_t at = distinct.find("static void websd_range_"); at != std::string::npos;
       at = distinct.find("static void websd_range_", at + 1)) {
    ++bodies;
  }
  EXPECT_EQ(bodies, 3u);
}

// What `websd inspect --source KERNEL` prints of a CPU library: the kernel's entry point and the
// range function it calls (shared by kernels of one body), nothing of the others.
TEST(CpuKernelSource, OneKernelsPartIsItsEntryAndTheRangeItCalls) {
  auto kernels = two_kernels();
  kernels.push_back(kernels[0]);
  kernels.back().name = "k_bias_silu_again";
  const std::string source = cpu_kernel_source(kernels);
  const std::string again = cpu_kernel_source_of(source, "k_bias_silu_again");
  EXPECT_EQ(again.rfind("static void websd_range_0(", 0), 0u) << again;
  EXPECT_NE(again.find("websd_silu("), std::string::npos) << again;
  EXPECT_NE(again.find("// k_bias_silu_again\nWEBSD_EXPORT int websd_kernel_k_bias_silu_again("), std::string::npos);
  EXPECT_EQ(again.substr(again.size() - 3), "\n}\n");
  EXPECT_EQ(again.find("websd_kernel_k_clamp"), std::string::npos) << again;
  EXPECT_EQ(again.find("websd_kernel_k_bias_silu("), std::string::npos) << again;
  const std::string clamp = cpu_kernel_source_of(source, "k_clamp");
  EXPECT_EQ(clamp.rfind("static void websd_range_1(", 0), 0u) << clamp;
  EXPECT_EQ(clamp.find("websd_silu("), std::string::npos) << clamp;
  try {
    cpu_kernel_source_of(source, "k_bias");  // a prefix of a kernel's name is not that kernel
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no kernel 'k_bias'"), std::string::npos) << error.what();
  }
}

TEST(CpuKernelSource, ManifestListsEveryKernelWithItsShapes) {
  const nlohmann::json manifest = nlohmann::json::parse(cpu_kernel_manifest(two_kernels()));
  EXPECT_EQ(manifest.at("abi"), 1);
  EXPECT_EQ(manifest.at("target"), "cpu");
  EXPECT_FALSE(manifest.at("websd_version").get<std::string>().empty());
  ASSERT_EQ(manifest.at("kernels").size(), 2u);
  EXPECT_EQ(manifest["kernels"][0]["name"], "k_bias_silu");
  EXPECT_EQ(manifest["kernels"][0]["inputs"], nlohmann::json::parse("[[2,3,8],[8]]"));
  EXPECT_EQ(manifest["kernels"][0]["output"], nlohmann::json::parse("[2,3,8]"));
  EXPECT_EQ(manifest["kernels"][1]["name"], "k_clamp");
}

TEST(CpuKernelSource, RejectsInvalidKernelsByName) {
  auto kernels = two_kernels();
  kernels[1].name = "k_bias_silu";
  EXPECT_NE(error_of(kernels).find("'k_bias_silu' is used twice"), std::string::npos);
  kernels = two_kernels();
  kernels[0].name = "bad name";
  EXPECT_NE(error_of(kernels).find("'bad name' is not a C identifier"), std::string::npos);
  kernels = two_kernels();
  kernels[0].inputs[1].shape = {3};
  EXPECT_NE(error_of(kernels).find("kernel 'k_bias_silu': input 1 f32[3] does not broadcast"), std::string::npos);
  kernels = two_kernels();
  kernels[1].inputs[0].dtype = DType::kI64;
  EXPECT_NE(error_of(kernels).find("kernel 'k_clamp': input 0"), std::string::npos);
  kernels = two_kernels();
  kernels[1].program.constants.pop_back();
  EXPECT_NE(error_of(kernels).find("reads constant 1 of 1"), std::string::npos);
}

TEST(CpuKernelSource, SpecsComeFromTheFusedNodesOfAFunction) {
  graph::Function function("unet");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 4}});
  const auto w = b.weight("w", {4});
  const auto mixed = b.op("softmax", {b.op("silu", {b.add(x, w)})}, {{"axis", std::int64_t{-1}}});
  function.set_outputs({b.mul(mixed, b.scalar(3.0))});
  const auto specs = cpu_kernel_specs(passes::fuse_elementwise(function));
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "unet_fused_elementwise_0");
  EXPECT_EQ(ops::fused_program_text(specs[0].program.code), "in0 in1 add silu");
  EXPECT_EQ(specs[0].inputs, (std::vector<TensorType>{{DType::kF32, {2, 4}}, {DType::kF32, {4}}}));
  EXPECT_EQ(specs[1].name, "unet_fused_elementwise_1");
  EXPECT_EQ(specs[1].program.constants, std::vector<float>{3.0f});
  EXPECT_EQ(specs[1].output, (TensorType{DType::kF32, {2, 4}}));
}

}  // namespace
}  // namespace websd::codegen
