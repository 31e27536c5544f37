// `websd inspect` as a user runs it: the text summary, the JSON form, encrypted artifacts, and
// one error line for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "artifact/artifact_writer.h"
#include "artifact/function_signatures.h"
#include "artifact_test_support.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

void expect_one_error_line(const test::CommandResult& result, const std::string& part) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_EQ(result.err.rfind("websd: error: [artifact] ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err << "\nlacks: " << part;
}

// The sample weights plus the sections the compiler writes.
std::string write_compiled_artifact(const std::string& tag) {
  const std::string dir = test::make_temp_dir(tag) + "/art";
  artifact::ArtifactWriter writer(dir, "cpu", test::small_shard_options());
  for (const auto& tensor : test::sample_tensors())
    writer.add_weight(tensor.name, tensor.shape, tensor.dtype, tensor.bytes);
  writer.set_section(
      std::string(artifact::kFunctionsSection),
      artifact::functions_section_to_json(
          {{"clip", {{"ids", "i64", {2, 77}}}, {{"hidden", "f32", {2, 77, 32}}}, 12, 4096},
           {"unet",
            {{"sample", "f32", {2, 4, 16, 16}}, {"timestep", "f32", {1}}, {"context", "f32", {2, 77, 32}}},
            {{"noise", "f32", {2, 4, 16, 16}}},
            57,
            3 << 20}}));
  writer.set_section("kernels", nlohmann::json::array({{{"name", "conv3x3_silu"}, {"group", 1}},
                                                       {{"name", "gemm_bias_residual"}},
                                                       {{"name", "softmax_rows"}}}));
  writer.set_section(
      "memory_plans",
      nlohmann::json::array(
          {{{"function", "unet"}, {"arena_bytes", 3 << 20}, {"peak_bytes", 5 << 20}, {"unplanned_bytes", 9 << 20}}}));
  writer.finish();
  return dir;
}

TEST(InspectCommand, TextSummary) {
  const std::string dir = write_compiled_artifact("inspect-text");
  const auto result = test::run_websd({"inspect", dir});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  for (const std::string& part :
       {"artifact    " + dir + "\n", std::string("target      cpu\n"), std::string("format      3 (written by websd "),
        std::string("sections    functions, kernels, memory_plans\n"), std::string("functions   2\n"),
        std::string("  clip                (ids: i64[2,77]) -> (hidden: f32[2,77,32])\n"),
        std::string("  unet                (sample: f32[2,4,16,16], timestep: f32[1], context: f32[2,77,32]) -> "
                    "(noise: f32[2,4,16,16])\n                      launches 57, arena 3.0 MiB\n"),
        std::string("kernels     3\n  conv3x3_silu\n  gemm_bias_residual\n  softmax_rows\n"),
        std::string("memory      1 plan(s)\n  unet           arena 3.0 MiB, peak 5.0 MiB, unplanned 9.0 MiB\n"),
        std::string("weights     5 tensors, 664 B in 3 shard(s), not encrypted\n"),
        std::string("  bf16           1 tensor, 128 B\n  f16            1 tensor, 40 B\n  f32            3 tensors, "
                    "496 B\n"),
        std::string(" of the manifest, which covers every file\n"),
        std::string("key         none: not encrypted, so whoever can edit the files can also recompute the digest\n"),
        std::string("signature   none (sign with 'websd build --sign-key K')\n")}) {
    EXPECT_NE(result.out.find(part), std::string::npos) << result.out << "\nlacks: " << part;
  }
}

TEST(InspectCommand, JsonSummary) {
  const std::string dir = write_compiled_artifact("inspect-json");
  const auto result = test::run_websd({"inspect", dir, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto summary = nlohmann::json::parse(result.out);
  EXPECT_EQ(summary["target"], "cpu");
  EXPECT_EQ(summary["format_version"], 3);
  EXPECT_EQ(summary["functions"].size(), 2u);
  EXPECT_EQ(summary["functions"][1]["symbol"], "unet");
  EXPECT_EQ(summary["functions"][1]["inputs"][2]["shape"], nlohmann::json::array({2, 77, 32}));
  EXPECT_EQ(summary["functions"][1]["launches"], 57);
  EXPECT_EQ(summary["kernels"]["count"], 3);
  EXPECT_EQ(summary["kernels"]["names"][1], "gemm_bias_residual");
  EXPECT_EQ(summary["memory_plans"][0]["peak_bytes"], 5 << 20);
  const auto& weights = summary["weights"];
  EXPECT_EQ(weights["count"], 5);
  EXPECT_EQ(weights["bytes"], 664);
  EXPECT_EQ(weights["shards"], 3);
  EXPECT_EQ(weights["shard_bytes"], 104 + 400 + 192);
  EXPECT_EQ(weights["by_dtype"]["f32"]["count"], 3);
  EXPECT_EQ(weights["encryption"], "none");
  const auto& protections = summary["protections"];
  EXPECT_EQ(protections["manifest_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(protections["encryption"], "none");
  EXPECT_EQ(protections["key_authenticated"], false);
  EXPECT_TRUE(protections["signature"].is_null());
  EXPECT_FALSE(summary.contains("verified"));
}

// --verify loads the artifact as `websd generate --artifact` would, after checking every shard: a
// container without the compiler's model section and launch lists cannot run, so it fails.
// (inspect_verify_test.cpp verifies artifacts that `websd build` wrote.)
TEST(InspectCommand, VerifyRefusesWhatGenerateCannotLoad) {
  const std::string dir = write_compiled_artifact("inspect-verify-container");
  expect_one_error_line(test::run_websd({"inspect", dir, "--verify"}), "no model section (rebuild the artifact)");
}

TEST(InspectCommand, EncryptedArtifactIsDescribedWithoutItsKey) {
  const std::string temp = test::make_temp_dir("inspect-encrypted");
  test::write_sample_artifact(temp + "/art", test::sample_key());
  const auto result = test::run_websd({"inspect", temp + "/art"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("5 tensors, 664 B in 3 shard(s), encrypted (aes-256-gcm)"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("kernels     (none)"), std::string::npos) << result.out;
  expect_one_error_line(test::run_websd({"inspect", temp + "/art", "--verify"}), "no key was given (pass --key-file)");
  const std::string key_file = test::write_hex_key_file(temp, test::sample_key());
  // With the key every shard decrypts and matches; then loading refuses the container (no model
  // section), as generate would.
  expect_one_error_line(test::run_websd({"inspect", temp + "/art", "--verify", "--key-file", key_file}),
                        "no model section (rebuild the artifact)");
}

TEST(InspectCommand, BadInputIsOneErrorLine) {
  const std::string temp = test::make_temp_dir("inspect-bad");
  expect_one_error_line(test::run_websd({"inspect", temp + "/nowhere"}), "no such directory (not a websd artifact");
  expect_one_error_line(test::run_websd({"inspect", temp, "--json"}), "no manifest.json");
  test::write_sample_artifact(temp + "/art");
  test::flip_byte(temp + "/art/weights/shard-00001.bin", 0);
  expect_one_error_line(test::run_websd({"inspect", temp + "/art", "--verify"}),
                        "weights/shard-00001.bin: checksum mismatch");
  test::edit_manifest(temp + "/art",
                      [](nlohmann::json& manifest) { manifest["sections"]["functions"][0]["launches"] = -1; });
  expect_one_error_line(test::run_websd({"inspect", temp + "/art"}),
                        "field 'functions[0].launches' is the integer -1, expected a non-negative integer");
}

}  // namespace
}  // namespace websd
