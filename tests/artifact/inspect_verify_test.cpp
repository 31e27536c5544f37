// `websd inspect ART --verify` runs every check that `websd generate --artifact ART` runs when it
// loads the artifact and calls its functions, and checks the SHA-256 of every weight shard and every
// file (the kernel library included). Each case breaks one thing in a copy of the artifact that
// `websd build` makes of the tiny-sd15 fixture model (built once per websd binary, shared by the
// test processes).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "artifact_test_support.h"
#include "built_fixture_artifacts.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

std::string describe(const test::CommandResult& result) {
  return "exit " + std::to_string(result.exit_code) + "\nstdout:\n" + result.out + "\nstderr:\n" + result.err;
}

// Exit 1, and stderr exactly one "websd: error: " line holding every part.
void expect_one_error_line(const test::CommandResult& result, const std::vector<std::string>& parts) {
  EXPECT_EQ(result.exit_code, 1) << describe(result);
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << describe(result);
  EXPECT_EQ(result.err.rfind("websd: error: ", 0), 0u) << result.err;
  for (const auto& part : parts)
    EXPECT_NE(result.err.find(part), std::string::npos) << result.err << "\nlacks: " << part;
}

// A copy of the built artifact to break.
std::string artifact_copy(const std::string& tag, const std::string& name = "tiny.art",
                          const std::vector<std::string>& extra = {}) {
  const std::string dir = test::make_temp_dir(tag) + "/art";
  fs::copy(test::built_fixture_artifact(name, extra), dir, fs::copy_options::recursive);
  return dir;
}

// The launch list of `symbol` in the manifest.
nlohmann::json& launch_list(nlohmann::json& manifest, const std::string& symbol) {
  return manifest.at("sections").at("launch_lists").at(symbol);
}

// `websd generate --artifact ART` for one step: it loads the artifact, then runs it.
test::CommandResult generate(const std::string& artifact) {
  const std::string out = test::make_temp_dir("inspect-verify-generate") + "/image.png";
  return test::run_websd(
      {"generate", "--artifact", artifact, "--prompt", "x", "--steps", "1", "--seed", "1", "--out", out});
}

TEST(InspectVerify, TheBuiltArtifactPassesEveryCheck) {
  const std::string dir = artifact_copy("inspect-verify-ok");
  const auto text = test::run_websd({"inspect", dir, "--verify"});
  ASSERT_EQ(text.exit_code, 0) << describe(text);
  EXPECT_NE(text.out.find("file(s) match their SHA-256; every check 'websd generate --artifact' runs at load passed\n"),
            std::string::npos)
      << text.out;
  const auto json = test::run_websd({"inspect", dir, "--verify", "--json"});
  ASSERT_EQ(json.exit_code, 0) << describe(json);
  const auto verified = nlohmann::json::parse(json.out).at("verified");
  EXPECT_GE(verified.at("shards_hashed").get<int>(), 1);
  EXPECT_GE(verified.at("files_hashed").get<int>(), 3);  // the kernel library, tokenizer and scheduler files
  EXPECT_EQ(verified.at("checks"),
            nlohmann::json::array({"seal", "manifest", "weight shards", "files", "model section", "launch lists",
                                   "kernel library", "executors", "signatures", "tokenizer", "scheduler"}));
}

TEST(InspectVerify, HelpSaysItRunsWhatGenerateRuns) {
  const auto help = test::run_websd({"inspect", "--help"});
  EXPECT_NE(help.out.find("Run every check that 'websd generate --artifact' runs when it loads"), std::string::npos)
      << help.out;
}

TEST(InspectVerify, FlippedByteOfTheKernelLibrary) {
  const std::string dir = artifact_copy("inspect-verify-kernels");
  test::flip_byte(dir + "/kernels/cpu_kernels.so", 4096);
  EXPECT_EQ(test::run_websd({"inspect", dir}).exit_code, 0);  // the size is right: only hashing finds it
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}),
                        {"[artifact] ", "checksum mismatch in file kernels/cpu_kernels.so"});
  // Loading finds it too, before the library is opened.
  expect_one_error_line(generate(dir), {"checksum mismatch in file kernels/cpu_kernels.so"});
}

TEST(InspectVerify, FlippedByteOfAModelFile) {
  const std::string dir = artifact_copy("inspect-verify-model-file");
  test::flip_byte(dir + "/model/scheduler/scheduler_config.json", 3);
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}),
                        {"checksum mismatch in file model/scheduler/scheduler_config.json"});
}

TEST(InspectVerify, EditedLaunchListOffset) {
  const std::string dir = artifact_copy("inspect-verify-offset");
  test::edit_manifest(dir, [](nlohmann::json& manifest) {
    for (auto& value : launch_list(manifest, "unet").at("values")) {
      if (value.at("placement") == "arena") {
        value["offset"] = value["offset"].get<std::int64_t>() + 1;
        break;
      }
    }
  });
  EXPECT_EQ(test::run_websd({"inspect", dir}).exit_code, 0);
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}), {"[artifact] ", "unet", "offset"});
}

TEST(InspectVerify, EditedLaunchListWeightName) {
  const std::string dir = artifact_copy("inspect-verify-weight");
  test::edit_manifest(dir, [](nlohmann::json& manifest) {
    launch_list(manifest, "vae_decode").at("weights").at(0)["name"] = "vae.no_such_weight";
  });
  EXPECT_EQ(test::run_websd({"inspect", dir}).exit_code, 0);
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}),
                        {"[artifact] ", "the launch lists name weight 'vae.no_such_weight' which the index lacks"});
}

TEST(InspectVerify, EditedLaunchListKernelName) {
  const std::string dir = artifact_copy("inspect-verify-kernel-name");
  bool edited = false;
  test::edit_manifest(dir, [&](nlohmann::json& manifest) {
    for (auto& kernel : launch_list(manifest, "unet").at("kernels")) {
      if (kernel.value("source", "") == "file") {
        kernel["entry"] = "websd_no_such_kernel";
        edited = true;
        break;
      }
    }
  });
  ASSERT_TRUE(edited) << "the unet launch list calls no generated kernel";
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}), {"websd_no_such_kernel"});
}

TEST(InspectVerify, EditedModelSectionType) {
  const std::string dir = artifact_copy("inspect-verify-model-type");
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["sections"]["model"]["latent_channels"] = "4"; });
  EXPECT_EQ(test::run_websd({"inspect", dir}).exit_code, 0);
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}),
                        {"[artifact] ", "the model section lacks integer 'latent_channels'"});
}

TEST(InspectVerify, EditedModelSectionValue) {
  const std::string dir = artifact_copy("inspect-verify-model-value");
  test::edit_manifest(dir, [](nlohmann::json& manifest) {
    auto& model = manifest["sections"]["model"];
    model["width"] = model["width"].get<std::int64_t>() * 2;
  });
  EXPECT_EQ(test::run_websd({"inspect", dir}).exit_code, 0);
  // The default size no longer the first of the sizes listed.
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}),
                        {"[artifact] ", "the model section's first size is not its width x height"});
  // Both edited alike: the functions were built for another size.
  test::edit_manifest(dir, [](nlohmann::json& manifest) {
    auto& size = manifest["sections"]["model"]["sizes"][0];
    size["width"] = size["width"].get<std::int64_t>() * 2;
  });
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}),
                        {"[artifact] ", "function 'unet' takes", "model section", "sizes 256x128"});
}

TEST(InspectVerify, EditedModelSectionMaxTokens) {
  const std::string dir = artifact_copy("inspect-verify-model-tokens");
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["sections"]["model"]["max_tokens"] = 76; });
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}), {"[artifact] ", "max_tokens 76"});
}

TEST(InspectVerify, ZeroScaleFactorIsRefusedNotDividedBy) {
  const std::string dir = artifact_copy("inspect-verify-model-zero");
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["sections"]["model"]["vae_scale_factor"] = 0; });
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}),
                        {"[artifact] ", "vae_scale_factor is 0, expected a positive integer"});
}

TEST(InspectVerify, EncryptedArtifactNeedsItsKey) {
  const std::vector<std::string> encrypt = {"--encrypt-key-file", test::fixture_key_file(kKeyHex)};
  const std::string dir = artifact_copy("inspect-verify-encrypted", "tiny-encrypted.art", encrypt);
  EXPECT_EQ(test::run_websd({"inspect", dir}).exit_code, 0);
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}), {"no key was given (pass --key-file)"});
  const auto verified = test::run_websd({"inspect", dir, "--verify", "--key-file", test::fixture_key_file(kKeyHex)});
  EXPECT_EQ(verified.exit_code, 0) << describe(verified);
  test::flip_byte(dir + "/weights/shard-00000.bin", 100);
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify", "--key-file", test::fixture_key_file(kKeyHex)}),
                        {"weights/shard-00000.bin: checksum mismatch"});
}

}  // namespace
}  // namespace websd
