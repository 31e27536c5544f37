// How websd's OpenMP threads (its own kernels and oneDNN's, both on libgomp) behave on a machine
// they share with other programs, other websd runs included. libgomp reads its settings from the
// environment once, when it is loaded before main(), so websd sets what the user left unset and
// executes itself again, once:
//   OMP_WAIT_POLICY=PASSIVE  a thread out of work sleeps at once instead of spinning (libgomp's
//                            default spins ~300 000 rounds after every parallel region: four runs
//                            on 2 cores went 9x slower together than one alone, and a run beside
//                            the test suite fell from 127 to 0.5 steps/s);
//   OMP_NUM_THREADS=N        when a cgroup CPU quota (cpu.max) allows fewer CPUs than the affinity
//                            mask holds, which libgomp alone would oversubscribe.
// Called first thing in main(); not thread-safe.
#pragma once

#include <string>

namespace websd::app {

// Returns without doing anything when the user set these variables, or when websd already set them
// (the second execution), or when executing again fails (then libgomp's defaults stay).
void adopt_openmp_policy(char** argv);

// What the running process uses: "passive (websd's default)", "active (OMP_WAIT_POLICY)", ... and the
// number of threads, for `websd bench`.
struct OpenmpPolicy {
  std::string wait_policy;  // the value of OMP_WAIT_POLICY, lower case; "default" when unset
  bool set_by_websd = false;
  int threads = 0;  // omp_get_max_threads()
};
OpenmpPolicy openmp_policy();

}  // namespace websd::app
