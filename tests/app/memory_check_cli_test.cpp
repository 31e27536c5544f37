// Every network of a run is checked against the memory available before the first one runs
// (issue 19): a decode that cannot fit is refused before the first denoising step, on the --model
// path (the networks compiled and planned up front) and on the --artifact path (the launch lists'
// memory plans), instead of after minutes of steps.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_checks.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

// At 2048x2048 the tiny model's text encoder needs about 0.5 GiB and its guided UNet step 0.8 GiB,
// but its VAE decoder 2.0 GiB: under a 1.4 GiB address space only the decode cannot fit.
constexpr std::uint64_t kLimitBytes = 1400ull << 20;

void expect_refused_before_any_step(const CommandResult& result) {
  expect_error(result, {"vae_decode for inputs [1,4,256,256] needs about", "available (choose a smaller size)"});
  EXPECT_EQ(result.err.find("denoise"), std::string::npos) << "a step ran before the refusal:\n" << result.err;
}

// With --vae-tiling off: in its default (auto) mode websd would decode this image in tiles
// (vae_tiling_cli_test.cpp).
TEST(MemoryCheck, ADecodeThatCannotFitIsRefusedBeforeTheFirstStepOnTheModelPath) {
  const std::string out = make_temp_dir("memory-model") + "/a.png";
  expect_refused_before_any_step(run_websd_with_address_limit(
      generate_args(fixture_model(), out, {"--width", "2048", "--height", "2048", "--vae-tiling", "off"}),
      kLimitBytes));
  EXPECT_FALSE(fs::exists(out));
}

TEST(MemoryCheck, ADecodeThatCannotFitIsRefusedBeforeTheFirstStepOnTheArtifactPath) {
  const std::string dir = make_temp_dir("memory-artifact");
  const CommandResult built = run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/art",
                                         "--width", "2048", "--height", "2048"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  // With --vae-tiling off: this artifact holds a decoder of the default tiles (vae_decode_tile), so
  // in auto mode websd would decode in tiles (tiled_decode_test.cpp).
  const CommandResult result =
      run_websd_with_address_limit({"generate", "--artifact", dir + "/art", "--prompt", "a boat", "--steps", "1",
                                    "--vae-tiling", "off", "--out", dir + "/a.png"},
                                   kLimitBytes);
  expect_refused_before_any_step(result);
  EXPECT_FALSE(fs::exists(dir + "/a.png"));
}

}  // namespace
}  // namespace websd::test
