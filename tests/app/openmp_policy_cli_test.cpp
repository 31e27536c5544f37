// The OpenMP policy websd runs its kernels under (src/app/openmp_policy.h), as `websd bench`
// reports it: threads that sleep when out of work, unless the user chose otherwise.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "support/run_command.h"

namespace websd::test {
namespace {

// `websd bench` of the demo model, one run; its "openmp" object.
nlohmann::json bench_openmp() {
  const CommandResult result = run_websd({"bench", "--runs", "1", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return nlohmann::json::parse(result.out).at("openmp");
}

void clear_openmp_environment() {
  for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "WEBSD_OPENMP_POLICY"}) {
    unsetenv(name);
  }
}

TEST(OpenmpPolicy, ThreadsSleepWhenOutOfWorkUnlessTheUserChose) {
  clear_openmp_environment();
  const nlohmann::json chosen = bench_openmp();
  EXPECT_EQ(chosen.at("wait_policy"), "passive");
  EXPECT_EQ(chosen.at("set_by_websd"), true);
  EXPECT_GE(chosen.at("threads").get<int>(), 1);

  setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  const nlohmann::json users = bench_openmp();
  EXPECT_EQ(users.at("wait_policy"), "active");
  EXPECT_EQ(users.at("set_by_websd"), false);

  clear_openmp_environment();
  setenv("GOMP_SPINCOUNT", "1000", 1);  // a user tuning libgomp's spinning is left alone too
  EXPECT_EQ(bench_openmp().at("wait_policy"), "default");
  clear_openmp_environment();
}

TEST(OpenmpPolicy, TheUsersThreadCountIsKept) {
  clear_openmp_environment();
  setenv("OMP_NUM_THREADS", "1", 1);
  EXPECT_EQ(bench_openmp().at("threads"), 1);
  clear_openmp_environment();
}

}  // namespace
}  // namespace websd::test
