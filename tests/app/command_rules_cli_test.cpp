// One rule for every command (issue 19): outputs (io/output_paths.h) checked before any work, quickly
// however many a command names, and replaced only with --force; numeric options refused in one short
// line; import --verify refusing what generate would refuse.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

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

// Every command that writes a user-named output refuses to replace an existing one unless --force is
// given, before any work.
TEST(OutputRules, AnExistingOutputIsReplacedOnlyWithForce) {
  const std::string dir = make_temp_dir("rules-force");
  const std::string keep = dir + "/keep.png";
  std::ofstream(keep) << "keep";
  fs::create_directories(dir + "/folder/sub");
  const std::string exists = "exists (pass --force to replace it";
  const std::string not_empty = "exists and is not empty (pass --force";
  expect_error(run_websd(generate_args(fixture_model(), keep)), {"--out " + keep + ": " + exists});
  expect_error(run_websd(generate_args(fixture_model(), dir + "/new.png", {"--save-latents", keep})),
               {"--save-latents " + keep + ": " + exists});
  expect_error(run_websd({"noise", "--seed", "1", "--shape", "2", "--out", keep}), {"--out " + keep + ": " + exists});
  expect_error(run_websd({"convert", "--model", fixture_model(), "--out", keep}), {exists});
  expect_error(run_websd({"convert", "--model", fixture_model(), "--to", "diffusers", "--out", dir + "/folder"}),
               {not_empty});
  expect_error(run_websd({"make-model", "--preset", "tiny", "--format", "single-file", "--out", keep}), {exists});
  expect_error(run_websd({"make-model", "--preset", "tiny", "--out", dir + "/folder"}), {not_empty});
  expect_error(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/folder"}),
               {"--out " + dir + "/folder: " + not_empty});
  expect_error(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/art", "--dump-ir",
                          dir + "/folder"}),
               {"--dump-ir " + dir + "/folder: " + not_empty});
  EXPECT_EQ(read_all(keep), "keep");
  EXPECT_FALSE(fs::exists(dir + "/new.png"));
  EXPECT_FALSE(fs::exists(dir + "/art"));

  const CommandResult noise = run_websd({"noise", "--seed", "1", "--shape", "2", "--out", keep, "--force"});
  EXPECT_EQ(noise.exit_code, 0) << noise.err;
  EXPECT_NE(read_all(keep), "keep");
  const CommandResult image = run_websd(generate_args(fixture_model(), keep, {"--force"}));
  EXPECT_EQ(image.exit_code, 0) << image.err;
  const CommandResult file = run_websd({"convert", "--model", fixture_model(), "--out", keep, "--force"});
  EXPECT_EQ(file.exit_code, 0) << file.err;
  // A previous artifact is replaced with --force only (it is not an empty folder).
  const std::string art = dir + "/art";
  ASSERT_EQ(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", art}).exit_code, 0);
  expect_error(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", art}), {not_empty});
  const CommandResult rebuilt =
      run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", art, "--force"});
  EXPECT_EQ(rebuilt.exit_code, 0) << rebuilt.err;
}

// "--steps: 99999999999999999999 is not an integer from 1 to 2^31-1": the option, the value as given
// and the range, in one short line (CLI11 printed DBL_MAX in full, 309 digits).
TEST(NumberOptions, AValueOutOfRangeIsOneShortLineNamingTheRange) {
  const std::string dir = make_temp_dir("rules-numbers");
  const std::string out = dir + "/a.png";
  const std::vector<std::tuple<std::vector<std::string>, std::string>> cases = {
      {generate_args(fixture_model(), out, {"--steps", "99999999999999999999"}),
       "--steps: 99999999999999999999 is not an integer from 1 to 2^31-1"},
      {generate_args(fixture_model(), out, {"--steps", "0"}), "--steps: 0 is not an integer from 1 to 2^31-1"},
      {generate_args(fixture_model(), out, {"--guidance", "1e400"}), "--guidance: 1e400 is not a finite number"},
      {generate_args(fixture_model(), out, {"--guidance", "nan"}), "--guidance: nan is not a finite number"},
      {generate_args(fixture_model(), out, {"--width", "-5"}), "--width: -5 is not an integer from 1 to 2^63-1"},
      {generate_args(fixture_model(), out, {"--height", "1e3"}), "--height: 1e3 is not an integer from 1 to 2^63-1"},
      {generate_args(fixture_model(), out, {"--batch-count", "1e10"}),
       "--batch-count: 1e10 is not an integer from 1 to 10000"},
      {generate_args(fixture_model(), out, {"--batch-count", "10001"}),
       "--batch-count: 10001 is not an integer from 1 to 10000"},
      {generate_args(fixture_model(), out, {"--strength", "0x1p3"}), "--strength: 0x1p3 is not a finite number"},
      {{"build", "--target", "cpu", "--out", dir + "/art", "--height", "0"},
       "--height: 0 is not an integer from 1 to 2^63-1"},
      {{"bench", "--runs", "-1"}, "--runs: -1 is not an integer from 1 to 2^31-1"},
      {{"tune", "--target", "cpu", "--runs", "0"}, "--runs: 0 is not an integer from 1 to 2^31-1"},
      {{"profile", "--artifact", dir, "--top", "-1"}, "--top: -1 is not an integer from 1 to 2^31-1"},
      {{"profile", "--artifact", dir, "--top", "0"}, "--top: 0 is not an integer from 1 to 2^31-1"},
      {{"profile", "--artifact", dir, "--runs", "1.5"}, "--runs: 1.5 is not an integer from 1 to 2^31-1"},
      {{"scheduler", "--name", "ddim", "--steps", "5", "--strength", "2"},
       "--strength: 2 is not a number from 0 to 1"}};
  const std::regex long_number("[0-9]{21,}");
  for (const auto& [args, message] : cases) {
    const CommandResult result = run_websd(args);
    expect_error(result, {message}, 2);
    EXPECT_FALSE(std::regex_search(result.err, long_number)) << result.err;
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

// import --verify checks the image size generate makes by default (the UNet's sample_size times the
// VAE's scale) as generate checks it, and names the key and its value.
TEST(ImportVerify, ASampleSizeWhoseDefaultImageGenerateRefusesIsRefused) {
  const std::string model = copy_fixture("rules-sample-size");
  const std::string config = model + "/unet/config.json";
  nlohmann::json unet;
  std::ifstream(config) >> unet;
  unet["sample_size"] = 17;
  std::ofstream(config) << unet.dump();
  expect_error(run_websd({"import", "--model", model, "--verify"}),
               {config + ": sample_size 17 makes generate's default image 136x136", "not a positive multiple of"});
  expect_error(run_websd(generate_args(model, make_temp_dir("rules-sample-out") + "/a.png")),
               {"width 136 is not a positive multiple of"});
}

}  // namespace
}  // namespace websd::test
