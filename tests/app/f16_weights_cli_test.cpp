// `--dtype f16` on the CPU as a user meets it (issue 38): generate --model and build --target cpu
// say that convolution and linear weights are held in f16 and widened for each call; a build's
// launch lists and packed weights carry the choice; the image stays within the fixtures' image
// bound of the f32 one (the fixture's weights are f16 already, so it should be the same image).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "io/png_file.h"
#include "support/cli_checks.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kF16Message =
    "convolution and linear weights held in f16 (half their memory), widened to f32 for each call; everything "
    "computes in f32";

// The largest difference of one channel of one pixel, in levels.
int max_level_difference(const std::string& a_path, const std::string& b_path) {
  const RgbImage a = png_read_rgb(a_path), b = png_read_rgb(b_path);
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  int most = 0;
  for (std::size_t i = 0; i < std::min(a.pixels.size(), b.pixels.size()); ++i) {
    most = std::max(most, std::abs(static_cast<int>(a.pixels[i]) - static_cast<int>(b.pixels[i])));
  }
  return most;
}

// Each test in a folder of its own: ctest runs them as parallel processes.
class F16WeightsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir(std::string("f16-weights-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(F16WeightsCli, GenerateHoldsTheWeightsInF16AndSaysSo) {
  const CommandResult f32 = run_websd(generate_args(fixture_model(), path("f32.png"), {"--no-weight-cache"}));
  ASSERT_EQ(f32.exit_code, 0) << f32.err;
  const CommandResult f16 =
      run_websd(generate_args(fixture_model(), path("f16.png"), {"--dtype", "f16", "--no-weight-cache"}));
  ASSERT_EQ(f16.exit_code, 0) << f16.err;
  EXPECT_NE(f16.err.find("websd generate: " + std::string(kF16Message)), std::string::npos) << f16.err;
  EXPECT_EQ(f32.err.find(kF16Message), std::string::npos) << f32.err;
  EXPECT_LE(max_level_difference(path("f16.png"), path("f32.png")), 2);
}

TEST_F(F16WeightsCli, ACpuBuildInF16HoldsItsPackedWeightsInF16) {
  const CommandResult built =
      run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--dtype", "f16", "--out", path("art")});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  EXPECT_NE(built.err.find("websd build: " + std::string(kF16Message)), std::string::npos) << built.err;
  const std::string manifest = read_all(path("art") + "/manifest.json");
  // Launch attributes are typed in the manifest: "weights": {"string": "f16"}; the linear layers'
  // weights are held row-major in f16, the convolutions' in their packing marked f16-held.
  EXPECT_TRUE(std::regex_search(manifest, std::regex("\"weights\":\\s*\\{\\s*\"string\":\\s*\"f16\"")));
  EXPECT_NE(manifest.find("\"f16-row-major\""), std::string::npos);
  EXPECT_TRUE(std::regex_search(manifest, std::regex("\"onednn(-gemm|-winograd2x3)?-f16:")));

  // The fixture model's own run as generate_args makes it: the same prompt, step and seed.
  const CommandResult ran = run_websd({"generate", "--artifact", path("art"), "--prompt", "a boat", "--steps", "1",
                                       "--seed", "1", "--out", path("art.png")});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  const CommandResult model = run_websd(generate_args(fixture_model(), path("model.png"), {"--no-weight-cache"}));
  ASSERT_EQ(model.exit_code, 0) << model.err;
  EXPECT_LE(max_level_difference(path("art.png"), path("model.png")), 2);
}

}  // namespace
}  // namespace websd::test
