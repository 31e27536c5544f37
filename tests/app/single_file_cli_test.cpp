// Single-file checkpoints through the CLI, as a user runs them: convert both ways, make-model
// --format single-file, generate/import/build on a .safetensors file, a non-square model's default
// image size, and the errors of options that do not apply.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/png_file.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

std::string fixture_model() { return fixture_path("tiny-sd15/model"); }

void expect_ok(const CommandResult& result) { EXPECT_EQ(result.exit_code, 0) << result.err << result.out; }

void expect_error(const CommandResult& result, const std::string& part, int code = 1) {
  EXPECT_EQ(result.exit_code, code) << result.out;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
}

TEST(SingleFileCli, ConvertGenerateAndConvertBack) {
  const std::string dir = make_temp_dir("cli-single");
  const std::string file = dir + "/tiny.safetensors";
  expect_ok(run_websd({"convert", "--model", fixture_model(), "--out", file}));
  ASSERT_TRUE(fs::exists(file));

  const auto imported = run_websd({"import", "--model", file, "--json"});
  expect_ok(imported);
  const auto summary = nlohmann::json::parse(imported.out);
  EXPECT_EQ(summary["format"], "single_file");
  EXPECT_EQ(summary["family"], "SD 1.x");

  const std::vector<std::string> common = {"--prompt", "a red house", "--steps", "2", "--seed", "3"};
  auto args = std::vector<std::string>{"generate",     "--model",        fixture_model(),       "--out",
                                       dir + "/a.png", "--save-latents", dir + "/a.safetensors"};
  args.insert(args.end(), common.begin(), common.end());
  expect_ok(run_websd(args));
  args = {"generate", "--model", file, "--out", dir + "/b.png", "--save-latents", dir + "/b.safetensors"};
  args.insert(args.end(), common.begin(), common.end());
  expect_ok(run_websd(args));
  const auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(dir + "/a.safetensors"), read(dir + "/b.safetensors"));

  const std::string back = dir + "/back";
  const auto converted = run_websd({"convert", "--model", file, "--out", back});
  expect_ok(converted);
  EXPECT_NE(converted.out.find("diffusers folder"), std::string::npos);
  EXPECT_TRUE(fs::exists(back + "/unet/diffusion_pytorch_model.safetensors"));
  expect_error(run_websd({"convert", "--model", file, "--out", back}), "exists and is not empty (pass --force");
  expect_ok(run_websd({"convert", "--model", file, "--out", back, "--force"}));
}

TEST(SingleFileCli, MakeModelWritesASingleFileThatEveryCommandTakes) {
  const std::string dir = make_temp_dir("cli-make-single");
  const std::string file = dir + "/random.safetensors";
  expect_ok(run_websd({"make-model", "--preset", "tiny", "--format", "single-file", "--out", file, "--seed", "4"}));
  ASSERT_TRUE(fs::exists(file));
  for (const auto& entry : fs::directory_iterator(dir)) EXPECT_EQ(entry.path(), file) << "left behind";
  expect_error(run_websd({"make-model", "--preset", "tiny", "--format", "single-file", "--out", file}),
               "exists (pass --force to replace it");
  expect_error(run_websd({"make-model", "--preset", "tiny", "--format", "single-file", "--out", dir}), "is a folder");
  expect_ok(run_websd({"import", "--model", file}));
  expect_ok(run_websd({"build", "--model", file, "--target", "cpu", "--out", dir + "/art"}));
  expect_ok(
      run_websd({"generate", "--artifact", dir + "/art", "--prompt", "x", "--steps", "1", "--out", dir + "/c.png"}));
}

TEST(SingleFileCli, ANonSquareModelGeneratesItsOwnSizeByDefault) {
  const std::string dir = make_temp_dir("cli-non-square");
  const std::string model = dir + "/model";
  fs::copy(fixture_model(), model, fs::copy_options::recursive);
  for (const auto& [component, size] : {std::pair{"unet", nlohmann::json{16, 24}}, {"vae", nlohmann::json{128, 192}}}) {
    const std::string path = model + "/" + component + "/config.json";
    nlohmann::json config;
    std::ifstream(path) >> config;
    config["sample_size"] = size;
    std::ofstream(path) << config.dump(2);
  }
  expect_ok(run_websd({"generate", "--model", model, "--prompt", "a wide view", "--steps", "1", "--seed", "1", "--out",
                       dir + "/wide.png"}));
  const RgbImage image = png_read_rgb(dir + "/wide.png");
  EXPECT_EQ(image.width, 192);
  EXPECT_EQ(image.height, 128);
}

TEST(SingleFileCli, OptionsThatDoNotApplyAreRefused) {
  const std::string dir = make_temp_dir("cli-single-options");
  expect_error(run_websd({"import", "--model", fixture_model(), "--use-ema"}), "--use-ema applies to single-file");
  expect_error(run_websd({"generate", "--model", fixture_model(), "--prompt", "x", "--prediction-type", "x0", "--out",
                          dir + "/x.png"}),
               "--prediction-type", 2);
  std::ofstream(dir + "/weights.ckpt") << "PK\x03\x04";
  expect_error(run_websd({"generate", "--model", dir + "/weights.ckpt", "--prompt", "x", "--out", dir + "/y.png"}),
               "a PyTorch pickle checkpoint");
  EXPECT_FALSE(fs::exists(dir + "/y.png"));
}

}  // namespace
}  // namespace websd::test
