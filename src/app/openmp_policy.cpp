#include "app/openmp_policy.h"

#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string_view>

namespace websd::app {
namespace {

// Marks the second execution, and that the values came from websd rather than the user.
constexpr const char* kSetByWebsd = "WEBSD_OPENMP_POLICY";

// CPUs a cgroup v2 quota allows ("200000 100000" -> 2), rounded up; 0 when there is no quota.
int cgroup_cpu_quota() {
  std::ifstream file("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (!(file >> quota >> period) || quota == "max" || period <= 0) return 0;
  const long long allowed = std::atoll(quota.c_str());
  return allowed > 0 ? static_cast<int>((allowed + period - 1) / period) : 0;
}

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

}  // namespace

void adopt_openmp_policy(char** argv) {
  if (getenv(kSetByWebsd) != nullptr) return;
  const bool set_wait = getenv("OMP_WAIT_POLICY") == nullptr && getenv("GOMP_SPINCOUNT") == nullptr;
  const int quota = cgroup_cpu_quota();
  const bool set_threads = getenv("OMP_NUM_THREADS") == nullptr && quota > 0 && quota < affinity_cpus();
  if (!set_wait && !set_threads) return;
  if (set_wait) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  if (set_threads) setenv("OMP_NUM_THREADS", std::to_string(quota).c_str(), 1);
  setenv(kSetByWebsd, "1", 1);
  execv("/proc/self/exe", argv);
  // Not executed again (no /proc?): run on with libgomp's defaults, and say nothing was set.
  unsetenv(kSetByWebsd);
  if (set_wait) unsetenv("OMP_WAIT_POLICY");
  if (set_threads) unsetenv("OMP_NUM_THREADS");
}

OpenmpPolicy openmp_policy() {
  OpenmpPolicy policy;
  const char* wait = getenv("OMP_WAIT_POLICY");
  policy.wait_policy = wait == nullptr ? "default" : wait;
  std::transform(policy.wait_policy.begin(), policy.wait_policy.end(), policy.wait_policy.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  policy.set_by_websd = getenv(kSetByWebsd) != nullptr;
  policy.threads = omp_get_max_threads();
  return policy;
}

}  // namespace websd::app
