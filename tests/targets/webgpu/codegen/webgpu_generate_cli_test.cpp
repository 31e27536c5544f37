// The webgpu target end to end, as a user runs it (issue 20, parts 3 to 6): `websd build --target
// webgpu` on the fixture model (two sizes), then `websd generate --artifact` (txt2img, img2img and
// init latents, against diffusers and the CPU), `websd bench --artifact` and `websd profile`,
// which hand the artifact to its own WebAssembly runtime and the WebGPU bridge under Node (Dawn on
// SwiftShader here, the GPU where there is one). The seeded txt2img rows of the fixture must come
// out within 4e-3 max abs of diffusers' images (about one 8-bit level; the PNG rounds to bytes),
// as on the CPU. Needs the WebAssembly runtime (scripts/build-wasm.sh) and npm `webgpu`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "io/json_file.h"
#include "io/png_file.h"
#include "io/safetensors_reader.h"
#include "support/fixtures.h"
#include "support/run_command.h"
#include "support/signing_key_files.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

// The fixture's webgpu artifact, built once by the CLI at the model's size and at 64x64.
const std::string& webgpu_artifact() {
  static const std::string out = test::build_webgpu_fixture_artifact("art", {"--size", "128x128", "--size", "64x64"});
  return out;
}

TEST(WebGpuBuild, TheArtifactCarriesItsRuntime) {
  for (const char* file :
       {"runtime/websd_web.js", "runtime/websd_web.wasm", "runtime/bridge/websd_gpu.mjs", "runtime/node/node_gpu.mjs",
        "runtime/node/websd_node.mjs", "runtime/node/shard_prefetch.mjs"}) {
    EXPECT_TRUE(fs::is_regular_file(webgpu_artifact() + "/" + file)) << file;
  }
}

class WebGpuSeededTxt2Img : public ::testing::TestWithParam<std::string> {};

TEST_P(WebGpuSeededTxt2Img, MatchesDiffusersThroughTheNodeRunner) {
  const std::string sched = GetParam();
  const nlohmann::json seeded = json_read_file(test::fixture_path("tiny-sd15/reference/seeded.json"));
  const std::string out = test::make_temp_dir("webgpu-seeded-" + sched) + "/image.png";
  const auto result =
      test::run_websd({"generate", "--artifact", webgpu_artifact(), "--prompt", seeded.at("prompt").get<std::string>(),
                       "--negative-prompt", seeded.at("negative_prompt").get<std::string>(), "--steps",
                       std::to_string(seeded.at("steps").get<int>()), "--guidance",
                       std::to_string(seeded.at("guidance_scale").get<double>()), "--seed",
                       std::to_string(seeded.at("seed").get<int>()), "--scheduler-config",
                       test::fixture_path("tiny-sd15/reference/scheduler-" + sched + ".json"), "--out", out});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("wrote " + out + " (128x128, seed 42)"), std::string::npos) << result.out;
  const RgbImage image = png_read_rgb(out);
  const SafetensorsFile reference(test::fixture_path("tiny-sd15/reference/seeded.safetensors"));
  const std::vector<float> expected = reference.read_f32("txt2img." + sched + ".image").data;
  ASSERT_EQ(expected.size(), image.pixels.size());
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::fabs(image.pixels[i] / 255.0 - expected[i]));
  }
  ::testing::Test::RecordProperty("max_abs", std::to_string(worst));
  EXPECT_LE(worst, 4e-3 + 0.5 / 255) << sched;  // the fixture's tolerance, plus the PNG's rounding
  bool seed_recorded = false;
  for (const PngText& text : png_read_text(out)) {
    seed_recorded |= text.keyword == "parameters" && text.text.find("Seed: 42") != std::string::npos;
  }
  EXPECT_TRUE(seed_recorded) << "the PNG records the parameters";
}

// euler_a: the sampler that also draws noise in every step. One scheduler only: a step of the
// fixture's UNet takes about 20 s on SwiftShader (2 cores), and the schedulers run on the host, the
// same code as the CPU path's parity tests cover for all of them.
INSTANTIATE_TEST_SUITE_P(Schedulers, WebGpuSeededTxt2Img, ::testing::Values("euler_a"));

// `generate` with `args` and `source` (--artifact A or --model M), its image at `dir`/`name`.png
// and its latents at `dir`/`name`.safetensors.
test::CommandResult generate(const std::vector<std::string>& source, const std::vector<std::string>& args,
                             const std::string& dir, const std::string& name) {
  std::vector<std::string> command = {"generate", "--out", dir + "/" + name + ".png", "--save-latents",
                                      dir + "/" + name + ".safetensors"};
  command.insert(command.end(), source.begin(), source.end());
  command.insert(command.end(), args.begin(), args.end());
  return test::run_websd(command);
}

// The worst difference between two PNGs of one size, in 8-bit levels.
int worst_levels(const std::string& a_path, const std::string& b_path) {
  const RgbImage a = png_read_rgb(a_path), b = png_read_rgb(b_path);
  EXPECT_EQ(a.pixels.size(), b.pixels.size());
  int worst = a.pixels.size() == b.pixels.size() ? 0 : 255;
  for (std::size_t i = 0; i < a.pixels.size() && i < b.pixels.size(); ++i) {
    worst = std::max(worst, std::abs(a.pixels[i] - b.pixels[i]));
  }
  return worst;
}

// The relative L2 distance between the `latents` of two --save-latents files.
double latents_distance(const std::string& a_path, const std::string& b_path) {
  const HostTensor a = SafetensorsFile(a_path).read_f32("latents"), b = SafetensorsFile(b_path).read_f32("latents");
  EXPECT_EQ(a.shape, b.shape);
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) {
    diff += (a.data[i] - b.data[i]) * static_cast<double>(a.data[i] - b.data[i]);
    norm += b.data[i] * static_cast<double>(b.data[i]);
  }
  return std::sqrt(diff / norm);
}

// img2img on the artifact's second size (64x64): the init image goes through the VAE encoder on
// the GPU, and the image and latents are the CPU's for the same seed, strength and scheduler
// (within 2 levels of 8 bits, the PNGs' rounding included; latents within 1e-3 relative L2). One
// denoising step: on SwiftShader here opening the artifact takes about 7 s, the encoder about
// 10 s, a UNet step 11 s and the decoder 16 s.
TEST(WebGpuGenerate, Img2ImgOnASecondSizeGivesTheCpuImageAndLatents) {
  const std::string dir = test::make_temp_dir("webgpu-img2img");
  const std::string model = test::fixture_path("tiny-sd15/model");
  const std::vector<std::string> first = {"--prompt", "a red cube", "--scheduler", "euler", "--steps",  "1",
                                          "--seed",   "5",          "--width",     "64",    "--height", "64"};
  ASSERT_EQ(generate({"--model", model}, first, dir, "init").exit_code, 0);
  const std::vector<std::string> request = {"--prompt", "a blue ball", "--scheduler",  "euler",
                                            "--steps",  "2",           "--strength",   "0.5",
                                            "--seed",   "9",           "--init-image", dir + "/init.png"};
  const auto on_gpu = generate({"--artifact", webgpu_artifact()}, request, dir, "webgpu");
  ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.err;
  EXPECT_NE(on_gpu.out.find("(64x64, seed 9)"), std::string::npos) << on_gpu.out;
  EXPECT_NE(on_gpu.err.find("encode image 1/1"), std::string::npos) << on_gpu.err;
  ASSERT_EQ(generate({"--model", model}, request, dir, "cpu").exit_code, 0);
  const int levels = worst_levels(dir + "/webgpu.png", dir + "/cpu.png");
  const double latents = latents_distance(dir + "/webgpu.safetensors", dir + "/cpu.safetensors");
  ::testing::Test::RecordProperty("max_levels", std::to_string(levels));
  ::testing::Test::RecordProperty("latents_relative_l2", std::to_string(latents));
  EXPECT_LE(levels, 2);
  EXPECT_LT(latents, 1e-3);
}

// --init-latents: the size comes from the latents (64x64 here), and the run gives the CPU's image.
TEST(WebGpuGenerate, InitLatentsGiveTheCpuImage) {
  const std::string dir = test::make_temp_dir("webgpu-init-latents");
  const std::string model = test::fixture_path("tiny-sd15/model");
  const std::vector<std::string> first = {"--prompt", "x",  "--scheduler", "euler", "--steps",  "1",
                                          "--seed",   "11", "--width",     "64",    "--height", "64"};
  ASSERT_EQ(generate({"--model", model}, first, dir, "noise").exit_code, 0);
  const std::vector<std::string> request = {
      "--prompt", "a green tree", "--scheduler", "euler", "--steps", "1", "--init-latents", dir + "/noise.safetensors"};
  const auto on_gpu = generate({"--artifact", webgpu_artifact()}, request, dir, "webgpu");
  ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.err;
  EXPECT_NE(on_gpu.out.find("(64x64, seed"), std::string::npos) << on_gpu.out;
  ASSERT_EQ(generate({"--model", model}, request, dir, "cpu").exit_code, 0);
  EXPECT_LE(worst_levels(dir + "/webgpu.png", dir + "/cpu.png"), 2);
  const auto missing = test::run_websd({"generate", "--artifact", webgpu_artifact(), "--prompt", "x", "--width", "96",
                                        "--height", "64", "--out", dir + "/none.png"});
  EXPECT_NE(missing.err.find("holds 128x128, 64x64 images, not 96x64"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir + "/none.png"));
}

TEST(WebGpuBench, ReportsTheAdapterPipelinesAndSteps) {
  // At the artifact's small size: the timings' plumbing is what is tested here (about 1 min on SwiftShader).
  const auto result = test::run_websd(
      {"bench", "--artifact", webgpu_artifact(), "--runs", "1", "--width", "64", "--height", "64", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_FALSE(json.at("adapter").get<std::string>().empty());
  EXPECT_GT(json.at("unet_step_cfg").at("median_s").get<double>(), 0);
  EXPECT_GT(json.at("vae_decode").at("median_s").get<double>(), 0);
  EXPECT_GT(json.at("open_s").get<double>(), 0);
  EXPECT_GT(json.at("peak_gpu_bytes").get<std::uint64_t>(), 0u);
  // SwiftShader offers no shader-f16: the base tier, named.
  EXPECT_EQ(json.at("tier"), "f32");
  // The cold start's parts: every weight read, checked and handed to the GPU, pipelines compiled.
  const nlohmann::json& load = json.at("load");
  EXPECT_GT(load.at("shard_bytes").get<std::uint64_t>(), 0u);
  EXPECT_GT(load.at("weight_bytes").get<std::uint64_t>(), 0u);
  EXPECT_GT(load.at("weight_import_s").get<double>(), 0);
  EXPECT_GT(load.at("pipelines_s").get<double>(), 0);
  EXPECT_GT(json.at("time_to_first_step_s").get<double>(), 0);
}

TEST(WebGpuTiers, InspectListsThemAndATierTheAdapterLacksIsOneClearError) {
  const auto inspected = test::run_websd({"inspect", webgpu_artifact()});
  ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_NE(inspected.out.find("tiers       3"), std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find("needs shader-f16\n"), std::string::npos) << inspected.out;
  // The tiers that hold GEMM weights in f16 need less device memory for them than the f32 tier.
  const auto weight_bytes = [&](const std::string& tier) {
    const std::size_t row = inspected.out.find("  " + tier + " ");
    const std::size_t at = inspected.out.find("weights ", row);
    return at == std::string::npos ? std::string() : inspected.out.substr(at, inspected.out.find(" on", at) - at);
  };
  EXPECT_NE(weight_bytes("f32"), weight_bytes("f16")) << inspected.out;
  EXPECT_EQ(weight_bytes("f16"), weight_bytes("subgroup-matrix")) << inspected.out;
  EXPECT_NE(inspected.out.find(" dispatches a step (unet_cfg)"), std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find("needs shader-f16, subgroups, chromium-experimental-subgroup-matrix\n"),
            std::string::npos)
      << inspected.out;
  const std::string dir = test::make_temp_dir("webgpu-tier");
  const auto result = test::run_websd({"generate", "--artifact", webgpu_artifact(), "--tier", "subgroup-matrix",
                                       "--prompt", "x", "--steps", "1", "--out", dir + "/a.png"});
  if (result.exit_code == 0) GTEST_SKIP() << "this adapter runs the subgroup-matrix tier (a GPU): nothing refused";
  EXPECT_NE(result.err.find("cannot run tier 'subgroup-matrix'"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir + "/a.png"));
}

// Its WebAssembly runtime reads no encrypted artifact: --key-file is refused before node starts.
TEST(WebGpuGenerate, AKeyFileIsRefusedBeforeNodeStarts) {
  const std::string dir = test::make_temp_dir("webgpu-refuse");
  std::ofstream(dir + "/key.hex") << std::string(64, 'a') << "\n";
  const auto result = test::run_websd({"generate", "--artifact", webgpu_artifact(), "--prompt", "x", "--steps", "1",
                                       "--key-file", dir + "/key.hex", "--out", dir + "/x.png"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("is a webgpu artifact: --key-file is not available for it"), std::string::npos)
      << result.err;
  EXPECT_FALSE(fs::exists(dir + "/x.png"));
}

// --trust-key is checked natively, before node starts: a webgpu artifact signed by another key is
// refused, naming the signer.
TEST(WebGpuGenerate, AnArtifactSignedByAnUntrustedKeyIsRefused) {
  const std::string dir = test::make_temp_dir("webgpu-trust");
  const test::SigningKeyFiles signer = test::write_signing_key_files(dir, 1);
  const test::SigningKeyFiles other = test::write_signing_key_files(dir, 2);
  const auto built = test::run_websd({"build", "--model", test::fixture_path("tiny-sd15/model"), "--target", "webgpu",
                                      "--out", dir + "/signed.art", "--sign-key", signer.private_pem});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const auto result = test::run_websd({"generate", "--artifact", dir + "/signed.art", "--prompt", "x", "--steps", "1",
                                       "--trust-key", other.public_pem, "--out", dir + "/x.png"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("which is not a trusted key"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir + "/x.png"));
}

TEST(WebGpuProfile, TimesEveryLaunchOfOneFunctionOnTheGpu) {
  const auto result =
      test::run_websd({"profile", "--artifact", webgpu_artifact(), "--function", "clip", "--runs", "2", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report.at("function"), "clip");
  EXPECT_NE(report.at("device"), "cpu");
  std::set<std::string> kernels;
  double calls = 0, kernels_ms = 0;
  for (const nlohmann::json& row : report.at("kernels")) {
    kernels.insert(row.at("kernel").get<std::string>());
    calls += row.at("calls").get<double>();
    kernels_ms += row.at("ms").get<double>();
    EXPECT_GT(row.at("ms").get<double>(), 0.0) << row;
  }
  EXPECT_TRUE(kernels.count("matmul") && kernels.count("layer_norm")) << report;
  // Every launch of the text encoder, once per run (the manifest's count).
  // (A two-size manifest is past json_read_file's cap for hand-written files: parsed directly.)
  std::ifstream manifest_file(webgpu_artifact() + "/manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  std::uint64_t launches = 0;
  for (const nlohmann::json& function : manifest.at("sections").at("functions")) {
    if (function.at("symbol") == "clip") launches = function.at("launches").get<std::uint64_t>();
  }
  EXPECT_EQ(calls, static_cast<double>(launches));
  EXPECT_NEAR(report.at("kernels_ms").get<double>(), kernels_ms, 1e-6 * kernels_ms);
  EXPECT_GT(report.at("wall_ms").get<double>(), 0.0);
}

TEST(WebGpuProfile, AnUnknownFunctionIsNamedBeforeNodeStarts) {
  const auto result = test::run_websd({"profile", "--artifact", webgpu_artifact(), "--function", "nope"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("has no function 'nope' (it has: clip, clip_b1,"), std::string::npos) << result.err;
}

TEST(WebGpuGenerate, NoAdapterIsOneClearErrorAndNoImage) {
  const std::string dir = test::make_temp_dir("webgpu-no-adapter");
  // A Vulkan driver file that does not exist: Dawn finds no adapter.
  setenv("VK_ICD_FILENAMES", (dir + "/no-such-driver.json").c_str(), 1);
  const auto result = test::run_websd(
      {"generate", "--artifact", webgpu_artifact(), "--prompt", "x", "--steps", "1", "--out", dir + "/x.png"});
  unsetenv("VK_ICD_FILENAMES");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("webgpu: no GPU adapter was found"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir + "/x.png"));
}

}  // namespace
}  // namespace websd
