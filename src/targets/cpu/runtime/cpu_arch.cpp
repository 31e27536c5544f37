#include "targets/cpu/runtime/cpu_arch.h"

#include <algorithm>

namespace websd::cpu {
namespace {

// The x86-64 level's index (0: x86-64 .. 3: v4), or -1 for another family.
int x86_level(std::string_view arch) {
  for (int level = 0; level < 4; ++level) {
    if (arch == kCpuArchs[static_cast<std::size_t>(level)]) return level;
  }
  return -1;
}

// What each level adds, for the refusal.
constexpr std::array<std::string_view, 4> kLevelNeeds = {"64-bit x86", "SSE4.2 and POPCNT", "AVX2, FMA and BMI2",
                                                         "AVX-512 F, BW, CD, DQ and VL"};

#if defined(__x86_64__)
// The highest level whose defining features the CPU reports (GCC's cpuid-backed builtins).
int host_x86_level() {
  __builtin_cpu_init();
  const bool v2 = __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("ssse3") &&
                  __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("sse4.2");
  const bool v3 = v2 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
                  __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? 3 : v3 ? 2 : v2 ? 1 : 0;
}
#endif

}  // namespace

bool is_cpu_arch(std::string_view arch) {
  return std::find(kCpuArchs.begin(), kCpuArchs.end(), arch) != kCpuArchs.end();
}

std::string cpu_arch_list() {
  std::string list;
  for (const std::string_view arch : kCpuArchs) list += (list.empty() ? "" : ", ") + std::string(arch);
  return list;
}

std::string host_cpu_arch() {
#if defined(__x86_64__)
  return std::string(kCpuArchs[static_cast<std::size_t>(host_x86_level())]);
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

std::string cpu_arch_refusal(std::string_view arch, const std::string& host) {
  const int wanted = x86_level(arch);
  const int have = x86_level(host);
  if (arch == host || (wanted >= 0 && have >= wanted)) return "";
  if (wanted >= 0 && have >= 0) {
    return "its kernels are built for " + std::string(arch) + " (" +
           std::string(kLevelNeeds[static_cast<std::size_t>(wanted)]) + "), which this CPU lacks (it runs " + host +
           "): rebuild it with --cpu-arch " + host + " or lower";
  }
  return "its kernels are built for " + std::string(arch) + " and this machine is " + host +
         ": rebuild it for this machine (websd build --target cpu" + (have >= 0 ? " --cpu-arch " + host : "") + ")";
}

}  // namespace websd::cpu
