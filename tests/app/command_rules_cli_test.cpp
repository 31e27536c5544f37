// One rule for every command (issue 19): outputs (io/output_paths.h) checked before any work, and
// quickly however many a command names.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "support/cli_checks.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

// generate --batch-count 10000 (the largest) names 10000 outputs. The check used to compare every
// pair again through the file system (28.6 s for 2000, about 10 minutes for 10000); now the run
// gets past it at once to the next refusal, init latents for one image instead of 10000.
TEST(OutputRules, TheLargestBatchCountGetsPastTheOutputCheckAtOnce) {
  const std::string dir = make_temp_dir("rules-batch");
  const std::string latents = dir + "/noise.safetensors";
  ASSERT_EQ(run_websd({"noise", "--seed", "1", "--shape", "1,4,16,16", "--out", latents}).exit_code, 0);
  const auto start = std::chrono::steady_clock::now();
  expect_error(run_websd(generate_args(fixture_model(), dir + "/many.png",
                                       {"--batch-count", "10000", "--init-latents", latents})),
               {"init latents have shape [1,4,16,16], expected [10000,4,16,16]"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120)) << "a quadratic output check";
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "only the noise file";
}

}  // namespace
}  // namespace websd::test
