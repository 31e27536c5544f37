// The artifact commands as a user meets them, through the real websd binary on the tiny fixture
// model: `websd build` (function table, IR dumps after every pass, its usage errors leaving --out
// alone), `generate --artifact` against `generate --model` (same latents, at each size of an
// artifact built for several), its errors, `profile`
// (JSON whose rows add up to the wall time, the table, an unknown function), `inspect`, `bench`
// with both backends, and encrypted artifacts with the right, no and a wrong key.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "artifact/artifact_file_edits.h"
#include "io/safetensors_reader.h"
#include "support/binary_cache.h"
#include "support/file_lock.h"
#include "support/fixtures.h"
#include "support/run_command.h"
#include "support/tensor_compare.h"
#include "targets/cpu/codegen/cpu_target.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

const char* const kSymbols[] = {"clip",     "clip_b1",    "unet",       "unet_b1",
                                "unet_cfg", "vae_decode", "vae_encode", "image_to_rgba"};
constexpr const char* kKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
constexpr const char* kOtherKeyHex = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

std::string tiny_model() { return fixture_path("tiny-sd15/model"); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::string describe(const CommandResult& result) {
  return "exit " + std::to_string(result.exit_code) + "\nstdout:\n" + result.out + "\nstderr:\n" + result.err;
}

// A failure reported the CLI's way: non-zero exit, nothing on stdout, and stderr exactly one line
// "websd: error: ..." holding every needle.
void expect_one_error_line(const CommandResult& result, const std::vector<std::string>& needles) {
  EXPECT_EQ(result.exit_code, 1) << describe(result);
  EXPECT_EQ(result.out, "") << describe(result);
  const auto lines = lines_of(result.err);
  ASSERT_EQ(lines.size(), 1u) << describe(result);
  EXPECT_EQ(lines[0].rfind("websd: error: ", 0), 0u) << lines[0];
  for (const auto& needle : needles) EXPECT_NE(lines[0].find(needle), std::string::npos) << lines[0];
}

// Names the websd binary under test by path, size and modification time.
// A folder beside this test binary shared by its test processes (ctest runs every test in its
// own), so the fixture model is built once per websd binary: named after the binary, it replaces
// the folders of earlier websd binaries; lock files serialise its creation and the builds in it.
fs::path shared_dir() {
  static const fs::path dir = websd_binary_cache_dir("artifact_cli_cache");
  return dir;
}

std::string key_file(const char* name, const char* hex) {
  const fs::path path = shared_dir() / name;
  FileLock lock(shared_dir() / "lock");
  if (!fs::exists(path)) write_text(path, std::string(hex) + "\n");
  return path.string();
}

// `websd build --model <fixture> --target cpu --out <shared>/<name> <extra>`, once per binary.
std::string built_artifact(const std::string& name, const std::vector<std::string>& extra = {}) {
  const fs::path out = shared_dir() / name;
  FileLock lock(shared_dir() / "lock");
  if (!fs::exists(out / "manifest.json")) {
    std::vector<std::string> args = {"build", "--model", tiny_model(), "--target", "cpu", "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult result = run_websd(args);
    if (result.exit_code != 0) throw std::runtime_error("websd build failed: " + describe(result));
  }
  return out.string();
}

std::string plain_artifact() { return built_artifact("tiny.art"); }
std::string encrypted_artifact() {
  return built_artifact("tiny-encrypted.art", {"--encrypt-key-file", key_file("key.hex", kKeyHex)});
}

// `websd generate --prompt x --steps 2 --seed 1` with `source` (--artifact A or --model M, plus
// anything else), saving the latents; returns them.
std::vector<float> generate_latents(const std::vector<std::string>& source, const std::string& tag,
                                    const std::string& size = "128x128") {
  const std::string dir = make_temp_dir(tag);
  std::vector<std::string> args = {"generate",
                                   "--prompt",
                                   "x",
                                   "--steps",
                                   "2",
                                   "--seed",
                                   "1",
                                   "--out",
                                   dir + "/image.png",
                                   "--save-latents",
                                   dir + "/latents.safetensors"};
  args.insert(args.end(), source.begin(), source.end());
  const CommandResult result = run_websd(args);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("wrote " + dir + "/image.png (" + size + ", seed 1)"), std::string::npos)
      << describe(result);
  EXPECT_TRUE(fs::is_regular_file(dir + "/image.png"));
  if (result.exit_code != 0) return {};
  return SafetensorsFile(dir + "/latents.safetensors").read_f32("latents").data;
}

// How many launches the artifact's launch list of `symbol` holds.
std::size_t launch_count(const std::string& artifact, const std::string& symbol) {
  const auto manifest = nlohmann::json::parse(read_text(fs::path(artifact) / "manifest.json"));
  return manifest.at("sections").at("launch_lists").at(symbol).at("launches").size();
}

// The build's pass names in order, as the IR dump files spell them.
std::vector<std::string> build_pass_names() {
  std::vector<std::string> names;
  for (const auto& pass : compiler::cpu_target().pass_list({})) {
    names.push_back(pass.name);
  }
  return names;
}

std::string dump_name(std::size_t position, const std::string& pass, const std::string& symbol) {
  char prefix[8];
  std::snprintf(prefix, sizeof(prefix), "%02zu-", position);
  return prefix + pass + "." + symbol + ".ir";
}

TEST(BuildCommand, WritesTheArtifactPrintsItsFunctionsAndDumpsTheIrAfterEveryPass) {
  const fs::path dir = make_temp_dir("build");
  const CommandResult result = run_websd({"build", "--model", tiny_model(), "--target", "cpu", "--out",
                                          (dir / "a.art").string(), "--dump-ir", (dir / "ir").string()});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_TRUE(fs::is_regular_file(dir / "a.art" / "manifest.json"));
  EXPECT_TRUE(fs::is_regular_file(dir / "a.art" / "kernels" / "cpu_kernels.so"));

  // The function table: a header, then one row per function with its launch count.
  const auto out = lines_of(result.out);
  ASSERT_FALSE(out.empty()) << result.out;
  EXPECT_EQ(out[0].rfind("function", 0), 0u) << out[0];
  EXPECT_NE(out[0].find("launches"), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("arena MiB"), std::string::npos) << out[0];
  for (const char* symbol : kSymbols) {
    const auto row = std::find_if(
        out.begin(), out.end(), [&](const std::string& line) { return line.rfind(std::string(symbol) + " ", 0) == 0; });
    ASSERT_NE(row, out.end()) << symbol << " missing from\n" << result.out;
    long launches = 0;
    EXPECT_EQ(std::sscanf(row->c_str() + std::string(symbol).size(), "%ld", &launches), 1) << *row;
    EXPECT_GT(launches, 0) << *row;
  }
  EXPECT_NE(result.out.find("weights: "), std::string::npos) << result.out;
  EXPECT_EQ(out.back(), "wrote " + (dir / "a.art").string());

  // <NN>-<pass>.<symbol>.ir for every function and every pass, 00-input first; nothing else.
  const std::vector<std::string> passes = build_pass_names();
  ASSERT_GT(passes.size(), 5u);
  std::set<std::string> expected;
  for (const char* symbol : kSymbols) {
    expected.insert(dump_name(0, "input", symbol));
    for (std::size_t i = 0; i < passes.size(); ++i) expected.insert(dump_name(i + 1, passes[i], symbol));
  }
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir / "ir")) found.insert(entry.path().filename().string());
  EXPECT_EQ(found, expected);
  EXPECT_TRUE(found.count("09-fuse_elementwise.unet.ir")) << "the pass list changed: update this example";
  for (const char* symbol : kSymbols) {
    for (const auto& name : {dump_name(0, "input", symbol), dump_name(passes.size(), passes.back(), symbol)}) {
      const std::string text = read_text(dir / "ir" / name);
      EXPECT_EQ(text.rfind("func @" + std::string(symbol) + "(", 0), 0u) << name << ": " << text.substr(0, 80);
    }
  }
}

struct BadBuild {
  std::string name;
  std::vector<std::string> args;  // besides --model (unless given), --target (unless given) and --out
  std::vector<std::string> needles;
};

TEST(BuildCommand, UsageErrorsAreOneLineAndWriteNothing) {
  const std::vector<BadBuild> cases = {
      {"unknown target",
       {"--target", "cdua"},
       {"--target 'cdua' is not a target this websd builds", "known targets: cpu ("}},
      {"unknown dtype", {"--dtype", "f8"}, {"--dtype f8", "use f32, f16 or bf16"}},
      {"width not a multiple", {"--width", "100"}, {"width 100 is not a positive multiple of 32"}},
      {"size not WxH", {"--size", "512"}, {"--size 512: expected WIDTHxHEIGHT in pixels, such as 512x768"}},
      {"a size not a multiple", {"--size", "128x128", "--size", "128x100"}, {"height 100 is not a positive multiple"}},
      {"size and width", {"--size", "128x128", "--width", "128"}, {"either as --size WxH (repeatable) or as one"}},
      {"unknown tier", {"--tiers", "warp"}, {"--tiers: the cpu target has no tier 'warp' (it has none)"}},
      {"missing model folder",
       {"--model", "/nonexistent/websd-model"},
       {"/nonexistent/websd-model", "no such file or folder"}},
  };
  for (const BadBuild& bad : cases) {
    SCOPED_TRACE(bad.name);
    const fs::path out = fs::path(make_temp_dir("bad-build")) / "a.art";
    std::vector<std::string> args = {"build", "--out", out.string()};
    const auto given = [&](const char* option) {
      return std::find(bad.args.begin(), bad.args.end(), option) != bad.args.end();
    };
    if (!given("--model")) args.insert(args.end(), {"--model", tiny_model()});
    if (!given("--target")) args.insert(args.end(), {"--target", "cpu"});
    args.insert(args.end(), bad.args.begin(), bad.args.end());
    expect_one_error_line(run_websd(args), bad.needles);
    EXPECT_FALSE(fs::exists(out));
    EXPECT_TRUE(fs::is_empty(out.parent_path())) << "no staging folder is left behind";
  }
}

TEST(BuildCommand, RefusesToReplaceAFolderThatIsNotAnArtifact) {
  const fs::path parent = make_temp_dir("not-artifact");
  const fs::path out = parent / "photos";
  fs::create_directories(out);
  write_text(out / "holiday.txt", "keep me");
  // --force replaces a previous artifact only, never another folder.
  const CommandResult result =
      run_websd({"build", "--model", tiny_model(), "--target", "cpu", "--out", out.string(), "--force"});
  EXPECT_EQ(result.exit_code, 1) << describe(result);
  EXPECT_EQ(result.out, "") << describe(result);
  // One error line, before any compiling: the output is checked first.
  EXPECT_EQ(result.err, "websd: error: [artifact] " + out.string() +
                            ": exists and is not a websd artifact; refusing to overwrite it (choose another output "
                            "or remove it)\n");
  // Untouched: the same single file with the same bytes, and nothing new beside it.
  std::vector<fs::path> entries(fs::directory_iterator(out), fs::directory_iterator{});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(read_text(out / "holiday.txt"), "keep me");
  std::vector<fs::path> siblings(fs::directory_iterator(parent), fs::directory_iterator{});
  EXPECT_EQ(siblings.size(), 1u) << "no staging folder is left behind";
}

TEST(GenerateCommand, AnArtifactGivesTheLatentsOfItsModel) {
  const std::vector<float> artifact = generate_latents({"--artifact", plain_artifact()}, "gen-artifact");
  const std::vector<float> model = generate_latents({"--model", tiny_model()}, "gen-model");
  ASSERT_EQ(artifact.size(), 4u * 16 * 16);
  ASSERT_EQ(model.size(), artifact.size());
  const double error = relative_l2(artifact, model);
  RecordProperty("latents_relative_l2", std::to_string(error));
  EXPECT_LT(error, 1e-4);
  EXPECT_GT(relative_l2(model, std::vector<float>(model.size(), 0.0f)), 0.5) << "latents are not all zero";
}

// An artifact of two sizes (build --size, repeated): inspect lists them, the first is the default,
// the other gives the latents the model gives at that size, a size it lacks names the ones it holds.
TEST(GenerateCommand, AnArtifactOfSeveralSizesRunsEachAsItsModel) {
  const std::string artifact = built_artifact("tiny-sizes.art", {"--size", "128x128", "--size", "96x64"});
  const CommandResult inspect = run_websd({"inspect", artifact});
  EXPECT_NE(inspect.out.find("sizes       128x128 (default), 96x64\n"), std::string::npos) << describe(inspect);
  EXPECT_EQ(generate_latents({"--artifact", artifact}, "sizes-default").size(), 4u * 16 * 16);
  const std::vector<float> wide =
      generate_latents({"--artifact", artifact, "--width", "96", "--height", "64"}, "sizes-wide", "96x64");
  const std::vector<float> model =
      generate_latents({"--model", tiny_model(), "--width", "96", "--height", "64"}, "sizes-model", "96x64");
  ASSERT_EQ(wide.size(), 4u * 8 * 12);
  EXPECT_LT(relative_l2(wide, model), 1e-4);
  EXPECT_EQ(generate_latents({"--artifact", artifact, "--height", "64"}, "sizes-height", "96x64").size(), wide.size());
  const std::string dir = make_temp_dir("sizes-missing");
  expect_one_error_line(run_websd({"generate", "--artifact", artifact, "--prompt", "x", "--width", "64", "--height",
                                   "96", "--out", dir + "/a.png"}),
                        {artifact + " holds 128x128, 96x64 images, not 64x96", "websd build --size WxH"});
  EXPECT_FALSE(fs::exists(dir + "/a.png"));
  const CommandResult verify = run_websd({"inspect", artifact, "--verify"});
  EXPECT_EQ(verify.exit_code, 0) << describe(verify);
}

TEST(GenerateCommand, ArtifactAndModelTogetherIsOneErrorLine) {
  const std::string dir = make_temp_dir("gen-both");
  expect_one_error_line(run_websd({"generate", "--artifact", plain_artifact(), "--model", tiny_model(), "--prompt", "x",
                                   "--steps", "2", "--out", dir + "/a.png"}),
                        {"--model and --artifact exclude each other"});
  EXPECT_FALSE(fs::exists(dir + "/a.png"));
}

TEST(GenerateCommand, ATierTheArtifactDoesNotHoldIsOneErrorLine) {
  const std::string dir = make_temp_dir("gen-tier");
  expect_one_error_line(run_websd({"generate", "--artifact", plain_artifact(), "--tier", "subgroup-matrix", "--prompt",
                                   "x", "--steps", "2", "--out", dir + "/a.png"}),
                        {"has no kernel tier 'subgroup-matrix'; it holds one lowering only"});
  EXPECT_FALSE(fs::exists(dir + "/a.png"));
}

TEST(GenerateCommand, ASizeTheArtifactWasNotBuiltForAsksForARebuildAndLeavesTheOutputAlone) {
  const std::string dir = make_temp_dir("gen-size");
  write_text(dir + "/a.png", "an older image");
  const CommandResult result = run_websd({"generate", "--artifact", plain_artifact(), "--prompt", "x", "--steps", "2",
                                          "--seed", "1", "--width", "256", "--out", dir + "/a.png", "--force"});
  EXPECT_EQ(result.exit_code, 1) << describe(result);
  const auto lines = lines_of(result.err);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().rfind("websd: error: ", 0), 0u) << result.err;
  EXPECT_NE(lines.back().find("holds 128x128 images, not width 256"), std::string::npos) << result.err;
  EXPECT_NE(lines.back().find("rebuild"), std::string::npos) << result.err;
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.find("error") != std::string::npos; }),
            1);
  EXPECT_EQ(read_text(dir + "/a.png"), "an older image");
}

// An artifact whose guided UNet step keeps its values in f16 (as one built for an f16 device
// would), on the CPU device, which stores floats as f32: generate refuses it when it opens the
// artifact, before the text encoder runs (no progress line, nothing written), as inspect --verify does.
TEST(GenerateCommand, AFunctionWithValuesTheDeviceDoesNotStoreIsRefusedAtOpen) {
  const std::string dir = make_temp_dir("gen-f16");
  const std::string artifact = dir + "/f16.art";
  fs::copy(plain_artifact(), artifact, fs::copy_options::recursive);
  edit_manifest(artifact, [](nlohmann::json& manifest) {
    nlohmann::json& list = manifest.at("sections").at("launch_lists").at("unet_cfg");
    for (const char* part : {"values", "weights"}) {
      for (auto& entry : list.at(part)) {
        if (entry.at("dtype") == "f32") entry["dtype"] = "f16";
      }
    }
  });
  const std::string refusal = "unet_cfg on cpu: value 0 is f16; this device stores only f32, i64 values";
  expect_one_error_line(
      run_websd({"generate", "--artifact", artifact, "--prompt", "x", "--steps", "2", "--out", dir + "/a.png"}),
      {refusal});
  EXPECT_FALSE(fs::exists(dir + "/a.png"));
  const CommandResult verify = run_websd({"inspect", artifact, "--verify"});
  EXPECT_EQ(verify.exit_code, 1) << describe(verify);
  EXPECT_NE(verify.err.find(refusal), std::string::npos) << describe(verify);
}

TEST(ProfileCommand, JsonRowsAndTheTimeBetweenLaunchesAddUpToTheWallTime) {
  const CommandResult result =
      run_websd({"profile", "--artifact", plain_artifact(), "--function", "unet", "--runs", "2", "--json"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(result.out)) << result.out;
  EXPECT_EQ(report.at("function"), "unet");
  EXPECT_EQ(report.at("runs"), 2);
  const auto& kernels = report.at("kernels");
  ASSERT_TRUE(kernels.is_array());
  ASSERT_FALSE(kernels.empty());
  double sum_ms = 0, calls = 0;
  std::set<std::string> names;
  for (const auto& row : kernels) {
    EXPECT_GE(row.at("ms").get<double>(), 0.0) << row;
    EXPECT_GT(row.at("calls").get<double>(), 0.0) << row;
    EXPECT_FALSE(row.at("shapes").get<std::string>().empty()) << row;
    names.insert(row.at("kernel").get<std::string>());
    sum_ms += row.at("ms").get<double>();
    calls += row.at("calls").get<double>();
  }
  EXPECT_TRUE(names.count("conv2d_nhwc")) << report;
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) {
    return n.rfind("unet_fused_elementwise_", 0) == 0;
  })) << "generated kernels are profiled under their entry points";
  // Every launch of the compiled UNet is timed once per run.
  EXPECT_EQ(calls, static_cast<double>(launch_count(plain_artifact(), "unet")));
  const double wall = report.at("wall_ms").get<double>();
  const double between = report.at("between_launches_ms").get<double>();
  EXPECT_GT(wall, 0.0);
  EXPECT_GE(between, 0.0);
  EXPECT_NEAR(sum_ms + between, wall, 1e-6 * wall);
  EXPECT_NEAR(report.at("kernels_ms").get<double>(), sum_ms, 1e-9 * wall);
}

TEST(ProfileCommand, TheTableEndsWithTheWallTime) {
  const CommandResult result =
      run_websd({"profile", "--artifact", plain_artifact(), "--function", "vae_decode", "--runs", "1", "--top", "3"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const auto lines = lines_of(result.out);
  ASSERT_GE(lines.size(), 7u) << result.out;
  EXPECT_NE(lines[0].find("vae_decode, 1 runs"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("kernel"), std::string::npos) << lines[1];
  EXPECT_NE(lines[lines.size() - 3].find("more kernel rows; --top to see them"), std::string::npos) << result.out;
  EXPECT_NE(lines[lines.size() - 2].find("between launches"), std::string::npos) << result.out;
  EXPECT_NE(lines.back().find("total = wall time"), std::string::npos) << result.out;
  EXPECT_NE(lines.back().find("100.0%"), std::string::npos) << lines.back();
}

TEST(ProfileCommand, AnUnknownFunctionIsAnErrorNamingIt) {
  const CommandResult result =
      run_websd({"profile", "--artifact", plain_artifact(), "--function", "nope", "--runs", "1"});
  EXPECT_EQ(result.exit_code, 1) << describe(result);
  EXPECT_EQ(result.out, "");
  const auto lines = lines_of(result.err);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(),
            "websd: error: [profile] " + plain_artifact() +
                " has no function 'nope' (it has: clip, clip_b1, image_to_rgba, unet, unet_b1, unet_cfg, vae_decode, "
                "vae_encode)")
      << result.err;
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.find("error") != std::string::npos; }),
            1);
}

TEST(InspectCommand, ListsTheFunctionsKernelsAndMemoryPlans) {
  const CommandResult text = run_websd({"inspect", plain_artifact()});
  ASSERT_EQ(text.exit_code, 0) << describe(text);
  const auto lines = lines_of(text.out);
  const auto row = [&](const std::string& label) {
    const auto found =
        std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(label + " ", 0) == 0; });
    return found == lines.end() ? std::string() : found->substr(label.size());
  };
  EXPECT_EQ(std::atoi(row("functions").c_str()), 8) << text.out;
  EXPECT_GT(std::atoi(row("kernels").c_str()), 0) << text.out;
  EXPECT_NE(row("memory").find("8 plan(s)"), std::string::npos) << text.out;
  for (const char* symbol : kSymbols) {
    // Once with its signature, once with its memory plan.
    const std::string start = "  " + std::string(symbol) + " ";
    const auto count =
        std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; });
    EXPECT_EQ(count, 2) << symbol << "\n" << text.out;
  }
  const std::string unet_launches = "launches " + std::to_string(launch_count(plain_artifact(), "unet")) + ", arena";
  EXPECT_NE(text.out.find(unet_launches), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not encrypted"), std::string::npos) << text.out;

  const CommandResult json = run_websd({"inspect", plain_artifact(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << describe(json);
  const nlohmann::json summary = nlohmann::json::parse(json.out);
  ASSERT_EQ(summary.at("functions").size(), 8u);
  EXPECT_GT(summary.at("kernels").at("count").get<int>(), 0);
  const auto& plans = summary.at("memory_plans");
  ASSERT_EQ(plans.size(), 8u);
  for (const auto& plan : plans) {
    EXPECT_GT(plan.at("arena_bytes").get<std::int64_t>(), 0) << plan;
    EXPECT_LE(plan.at("peak_bytes").get<std::int64_t>(), plan.at("arena_bytes").get<std::int64_t>()) << plan;
    EXPECT_LT(plan.at("arena_bytes").get<std::int64_t>(), plan.at("unplanned_bytes").get<std::int64_t>()) << plan;
  }
}

// inspect --source: a fused group's generated C++ as the artifact keeps it (its file's digest
// checked), one error naming kernels it has for an unknown name, and the file's tampering caught.
TEST(InspectCommand, PrintsTheSourceTheArtifactKeepsOfAKernel) {
  const nlohmann::json manifest = nlohmann::json::parse(read_text(plain_artifact() + "/manifest.json"));
  std::string kernel;
  for (const auto& entry : manifest.at("sections").at("kernels")) {
    ASSERT_EQ(entry.at("source"), "kernels/cpu_kernels.cpp") << entry;
    if (entry.at("name").get<std::string>().rfind("unet_", 0) == 0 && kernel.empty()) kernel = entry.at("name");
  }
  ASSERT_FALSE(kernel.empty());
  const CommandResult source = run_websd({"inspect", plain_artifact(), "--source", kernel});
  ASSERT_EQ(source.exit_code, 0) << describe(source);
  EXPECT_EQ(source.out.rfind("// " + kernel + " (kernels/cpu_kernels.cpp)\nstatic void websd_range_", 0), 0u)
      << source.out;
  EXPECT_NE(source.out.find("WEBSD_EXPORT int websd_kernel_" + kernel + "(const float* const* inputs"),
            std::string::npos)
      << source.out;

  const CommandResult unknown = run_websd({"inspect", plain_artifact(), "--source", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("has no kernel 'nope'; it has "), std::string::npos) << unknown.err;

  const std::string copy = make_temp_dir("inspect-source") + "/art";
  fs::copy(plain_artifact(), copy, fs::copy_options::recursive);
  {
    std::fstream file(copy + "/kernels/cpu_kernels.cpp", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(10);
    file.put('#');
  }
  const CommandResult tampered = run_websd({"inspect", copy, "--source", kernel});
  EXPECT_EQ(tampered.exit_code, 1);
  EXPECT_NE(tampered.err.find("cpu_kernels.cpp"), std::string::npos) << tampered.err;
}

TEST(BenchCommand, ComparesTheArtifactWithItsModel) {
  const CommandResult result =
      run_websd({"bench", "--artifact", plain_artifact(), "--model", tiny_model(), "--runs", "1", "--json"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  nlohmann::json report;
  ASSERT_NO_THROW(report = nlohmann::json::parse(result.out)) << result.out;
  ASSERT_TRUE(report.is_array()) << report;
  ASSERT_EQ(report.size(), 3u) << report;
  EXPECT_EQ(report[0].at("model"), tiny_model());
  EXPECT_EQ(report[1].at("artifact"), plain_artifact());
  for (const auto& phase : {report[0], report[1]}) {
    EXPECT_EQ(phase.at("width"), 128);
    EXPECT_GT(phase.at("unet_step_cfg").at("median_s").get<double>(), 0.0) << phase;
  }
  const auto& ratios = report.back().at("ratio_artifact_over_model");
  for (const char* key : {"unet_step_cfg", "vae_decode", "text_encoder", "peak_rss"}) {
    ASSERT_TRUE(ratios.contains(key)) << ratios;
    EXPECT_GT(ratios.at(key).get<double>(), 0.0) << key;
    EXPECT_TRUE(std::isfinite(ratios.at(key).get<double>())) << key;
  }
  const double unet =
      report[1]["unet_step_cfg"]["median_s"].get<double>() / report[0]["unet_step_cfg"]["median_s"].get<double>();
  EXPECT_DOUBLE_EQ(ratios.at("unet_step_cfg").get<double>(), unet);
}

TEST(EncryptedArtifact, GeneratesWithItsKeyAndRefusesNoKeyOrAnotherKey) {
  const std::string artifact = encrypted_artifact();
  const CommandResult inspect = run_websd({"inspect", artifact});
  ASSERT_EQ(inspect.exit_code, 0) << describe(inspect);
  EXPECT_NE(inspect.out.find("encrypted (aes-256-gcm)"), std::string::npos) << inspect.out;

  const std::vector<float> decrypted =
      generate_latents({"--artifact", artifact, "--key-file", key_file("key.hex", kKeyHex)}, "gen-key");
  const std::vector<float> plain = generate_latents({"--artifact", plain_artifact()}, "gen-plain");
  ASSERT_EQ(decrypted.size(), 4u * 16 * 16);
  EXPECT_LT(relative_l2(decrypted, plain), 1e-6) << "the same weights, so the same latents";

  const std::string dir = make_temp_dir("gen-nokey");
  const std::vector<std::string> request = {"generate", "--artifact", artifact, "--prompt",    "x",
                                            "--steps",  "2",          "--out",  dir + "/a.png"};
  expect_one_error_line(run_websd(request), {"is encrypted", "no key was given (pass --key-file)"});
  std::vector<std::string> wrong = request;
  const std::string other = key_file("other-key.hex", kOtherKeyHex);
  wrong.insert(wrong.end(), {"--key-file", other});
  expect_one_error_line(run_websd(wrong), {"wrong key: " + other});
  EXPECT_FALSE(fs::exists(dir + "/a.png"));
}

}  // namespace
}  // namespace websd::test
