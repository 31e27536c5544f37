// cpu_arch: the instruction sets a CPU artifact's kernel library is built for, this machine's, and
// the one sentence a machine that cannot run an artifact's kernels answers.
#include "targets/cpu/runtime/cpu_arch.h"

#include <gtest/gtest.h>

namespace websd::cpu {
namespace {

TEST(CpuArch, NamesTheLevelsAndThisMachinesOwn) {
  for (const std::string_view arch : kCpuArchs) EXPECT_TRUE(is_cpu_arch(arch)) << arch;
  EXPECT_FALSE(is_cpu_arch("x86-64-v5"));
  EXPECT_FALSE(is_cpu_arch("native"));
  EXPECT_EQ(cpu_arch_list(), "x86-64, x86-64-v2, x86-64-v3, x86-64-v4, aarch64");
  const std::string host = host_cpu_arch();
  EXPECT_TRUE(is_cpu_arch(host)) << host;
#if defined(__x86_64__)
  EXPECT_EQ(host.rfind("x86-64", 0), 0u) << host;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_TRUE(host == "x86-64-v3" || host == "x86-64-v4") << host;
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
    EXPECT_EQ(host, "x86-64-v4");
  }
#endif
  EXPECT_EQ(cpu_arch_refusal(kDefaultCpuArch), "") << "every x86-64 machine runs the default";
  EXPECT_EQ(cpu_arch_refusal(host), "");
}

TEST(CpuArch, AMachineRunsItsLevelAndThoseBelowAndRefusesTheRestInOneSentence) {
  EXPECT_EQ(cpu_arch_refusal("x86-64-v3", "x86-64-v4"), "");
  EXPECT_EQ(cpu_arch_refusal("x86-64", "x86-64-v2"), "");
  EXPECT_EQ(cpu_arch_refusal("aarch64", "aarch64"), "");
  EXPECT_EQ(cpu_arch_refusal("x86-64-v4", "x86-64-v3"),
            "its kernels are built for x86-64-v4 (AVX-512 F, BW, CD, DQ and VL), which this CPU lacks (it runs "
            "x86-64-v3): rebuild it with --cpu-arch x86-64-v3 or lower");
  EXPECT_EQ(cpu_arch_refusal("aarch64", "x86-64-v3"),
            "its kernels are built for aarch64 and this machine is x86-64-v3: rebuild it for this machine (websd "
            "build --target cpu --cpu-arch x86-64-v3)");
  EXPECT_EQ(cpu_arch_refusal("x86-64-v2", "aarch64"),
            "its kernels are built for x86-64-v2 and this machine is aarch64: rebuild it for this machine (websd "
            "build --target cpu)");
}

}  // namespace
}  // namespace websd::cpu
