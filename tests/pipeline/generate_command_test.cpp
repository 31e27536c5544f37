// `websd generate` run as a user runs it: the demo model, PNG output with its parameters, batch
// naming, given latents, img2img, and one clear error line for each bad input with --out untouched.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "io/png_file.h"
#include "io/safetensors_reader.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

using test::read_bytes;

std::string tiny_model() { return test::fixture_path("tiny-sd15/model"); }

std::string parameters_of(const std::string& png) {
  for (const PngText& text : png_read_text(png)) {
    if (text.keyword == "parameters") return text.text;
  }
  return "";
}

// A small, fast run of the fixture model (64x64 images, two steps) with `changes` applied: a value
// replaces the option's default, an empty value drops the option, a new option is added.
std::vector<std::string> quick_args(const std::string& out, const std::map<std::string, std::string>& changes = {}) {
  std::map<std::string, std::string> options = {{"--model", tiny_model()},
                                                {"--prompt", "a lighthouse"},
                                                {"--steps", "2"},
                                                {"--width", "64"},
                                                {"--height", "64"},
                                                {"--seed", "5"},
                                                {"--out", out}};
  for (const auto& [option, value] : changes) options[option] = value;
  std::vector<std::string> args = {"generate"};
  for (const auto& [option, value] : options) {
    if (!value.empty()) args.insert(args.end(), {option, value});
  }
  return args;
}

TEST(GenerateCommand, DemoModelWritesAPngWithItsParameters) {
  const std::string dir = test::make_temp_dir("generate");
  ASSERT_EQ(::setenv("XDG_CACHE_HOME", (dir + "/cache").c_str(), 1), 0);  // inherited by the child
  const std::string out = dir + "/demo.png";
  const auto result =
      test::run_websd({"generate", "--prompt", "a cat", "--negative-prompt", "dog", "--steps", "2", "--width", "64",
                       "--height", "32", "--seed", "7", "--scheduler", "euler_a", "--out", out});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("DEMO model with RANDOM weights"), std::string::npos) << result.err;
  EXPECT_TRUE(fs::exists(dir + "/cache/websd/demo-tiny/model_index.json"));
  const RgbImage image = png_read_rgb(out);
  EXPECT_EQ(image.width, 64);
  EXPECT_EQ(image.height, 32);
  EXPECT_EQ(parameters_of(out),
            "a cat\nNegative prompt: dog\n"
            "Steps: 2, Sampler: Euler a, CFG scale: 7.5, Seed: 7, Size: 64x32, Model: demo-tiny");
}

TEST(GenerateCommand, BatchCountNumbersTheFilesAndSavesAllLatents) {
  const std::string dir = test::make_temp_dir("generate");
  const auto result = test::run_websd(
      quick_args(dir + "/shot.png", {{"--batch-count", "2"}, {"--save-latents", dir + "/final.safetensors"}}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(dir + "/shot.png"));
  EXPECT_NE(parameters_of(dir + "/shot-0.png").find("Seed: 5,"), std::string::npos);
  EXPECT_NE(parameters_of(dir + "/shot-1.png").find("Seed: 6,"), std::string::npos);
  const SafetensorsFile latents(dir + "/final.safetensors");
  EXPECT_EQ(latents.at("latents").shape, (Shape{2, 4, 8, 8}));
}

TEST(GenerateCommand, InitLatentsEqualToTheSeedsDrawGiveTheSameImage) {
  const std::string dir = test::make_temp_dir("generate");
  const auto noise =
      test::run_websd({"noise", "--seed", "5", "--shape", "1,4,8,8", "--out", dir + "/noise.safetensors"});
  ASSERT_EQ(noise.exit_code, 0) << noise.err;
  ASSERT_EQ(test::run_websd(quick_args(dir + "/seeded.png")).exit_code, 0);
  const auto given = test::run_websd(quick_args(dir + "/given.png", {{"--init-latents", dir + "/noise.safetensors"}}));
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_EQ(png_read_rgb(dir + "/given.png").pixels, png_read_rgb(dir + "/seeded.png").pixels);
}

TEST(GenerateCommand, Img2ImgStartsFromTheInitImage) {
  const std::string dir = test::make_temp_dir("generate");
  const auto result =
      test::run_websd({"generate", "--model", tiny_model(), "--prompt", "a lighthouse", "--steps", "2", "--seed", "1",
                       "--scheduler", "ddim", "--init-image", test::fixture_path("tiny-sd15/reference/init.png"),
                       "--strength", "0.5", "--out", dir + "/edit.png"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(png_read_rgb(dir + "/edit.png").width, 128);  // the init image's size
  EXPECT_NE(parameters_of(dir + "/edit.png").find("Sampler: DDIM"), std::string::npos);
  EXPECT_NE(parameters_of(dir + "/edit.png").find("Denoising strength: 0.5"), std::string::npos);
}

struct BadInput {
  std::string name;
  // To quick_args; "@name" is a file in the test's folder, "fixture:path" a shared fixture.
  std::map<std::string, std::string> changes;
  std::string expected;  // in the error line
};

class GenerateBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(GenerateBadInput, IsOneErrorLineAndLeavesTheOutputUntouched) {
  const std::string dir = test::make_temp_dir("generate");
  const std::string out = dir + "/keep.png";
  std::ofstream(out) << "precious";
  std::ofstream(dir + "/garbage.safetensors") << "not a safetensors file";
  std::ofstream(dir + "/photo.png") << "\xFF\xD8\xFF\xE0 jpeg bytes";
  std::map<std::string, std::string> changes = GetParam().changes;
  for (auto& [option, value] : changes) {
    if (value.rfind("@", 0) == 0) value = dir + "/" + value.substr(1);
    if (value.rfind("fixture:", 0) == 0) value = test::fixture_path(value.substr(8));
  }
  // --force: the run gets past the output check to the bad input, and still leaves the output as it was.
  std::vector<std::string> args = quick_args(out, changes);
  args.push_back("--force");
  const auto result = test::run_websd(args);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(result.err.rfind("websd: error: ", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find(GetParam().expected), std::string::npos) << result.err;
  EXPECT_EQ(read_bytes(out), "precious");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GenerateBadInput,
    ::testing::Values(
        BadInput{"UnknownScheduler", {{"--scheduler", "warp_drive"}}, "warp_drive"},
        BadInput{"SizeNotMultipleOfEight", {{"--width", "100"}}, "width 100 is not a positive multiple of"},
        BadInput{"SizeTooSmallForTheUnet", {{"--height", "40"}}, "height 40 is not a positive multiple of 32"},
        BadInput{"MissingModelFolder", {{"--model", "/nonexistent/websd-model"}}, "/nonexistent/websd-model"},
        BadInput{"StrengthAboveOne",
                 {{"--init-image", "fixture:tiny-sd15/reference/init.png"},
                  {"--strength", "1.5"},
                  {"--width", ""},
                  {"--height", ""}},
                 "strength 1.5 is outside (0, 1]"},
        BadInput{"StrengthKeepingNoStep",
                 {{"--init-image", "fixture:tiny-sd15/reference/init.png"},
                  {"--strength", "0.2"},
                  {"--width", ""},
                  {"--height", ""}},
                 "keeps none of the 2 steps"},
        BadInput{"StrengthWithoutInitImage", {{"--strength", "0.5"}}, "--strength applies to img2img only"},
        BadInput{"InitImageOfAnotherSize",
                 {{"--init-image", "fixture:tiny-sd15/reference/init.png"}},
                 "init image is 128x128"},
        BadInput{"InitImageNotAPng", {{"--init-image", "@photo.png"}}, "not a PNG file"},
        BadInput{"UnreadableLatentsFile", {{"--init-latents", "@garbage.safetensors"}}, "garbage.safetensors"},
        BadInput{"MissingLatentsFile", {{"--init-latents", "@absent.safetensors"}}, "absent.safetensors"},
        BadInput{"ZeroSteps", {{"--steps", "0"}}, "--steps: 0 is not an integer from 1"},
        BadInput{"SchedulerConfigMissing", {{"--scheduler-config", "@absent.json"}}, "absent.json"},
        BadInput{"OutputFolderMissing", {{"--out", "/nonexistent/dir/x.png"}}, "/nonexistent/dir"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

}  // namespace
}  // namespace websd
