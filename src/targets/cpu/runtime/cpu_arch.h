// The instruction sets a CPU artifact's kernel library may be built for (`websd build --target cpu
// --cpu-arch ARCH`, recorded as the manifest's device_requirements.cpu_arch) and whether this
// machine runs them: the x86-64 micro-architecture levels (x86-64 is every 64-bit x86 CPU; v2 adds
// SSE4.2 and POPCNT; v3 AVX2, FMA and BMI2, Intel since Haswell and AMD since Zen; v4 AVX-512) and
// aarch64 (64-bit Arm, built with Debian's g++-aarch64-linux-gnu). Runtime code: no compiler.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace websd::cpu {

inline constexpr std::array<std::string_view, 5> kCpuArchs = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4",
                                                              "aarch64"};
// The level a CPU artifact is built for when none is chosen: every 64-bit x86 CPU runs it.
inline constexpr std::string_view kDefaultCpuArch = "x86-64";

bool is_cpu_arch(std::string_view arch);
// kCpuArchs joined with ", " (for messages).
std::string cpu_arch_list();
// This machine's: "aarch64", or the highest x86-64 level whose features its CPU has.
std::string host_cpu_arch();
// Empty when a machine of `host` (host_cpu_arch()'s answer; this one's by default) runs code built
// for `arch` (one of kCpuArchs); else one sentence saying what the code needs and what the machine is.
std::string cpu_arch_refusal(std::string_view arch, const std::string& host = host_cpu_arch());

}  // namespace websd::cpu
