// `websd import` as a user runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "import/checkpoint_folder.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

void expect_one_error_line(const test::CommandResult& result, const std::string& part) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_EQ(result.err.rfind("websd: error: ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err << "\nlacks: " << part;
}

TEST(ImportCommand, SummarisesTheFixture) {
  const std::string dir = test::fixture_path("tiny-sd15/model");
  const auto result = test::run_websd({"import", "--model", dir});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.err.empty()) << result.err;
  for (const char* part :
       {"unet: diffusers UNet2DConditionModel", "block_out_channels=[32,64,64]",
        "tensors: 494 (0 buffers), parameters: ", "dtypes: F16 x494", "text_encoder: transformers CLIPTextModel",
        "canonical 'text_model.' prefix (as stored)", "tokenizer folder ", "opened in ", "peak resident memory "}) {
    EXPECT_NE(result.out.find(part), std::string::npos) << result.out << "\nlacks: " << part;
  }
}

TEST(ImportCommand, JsonSummaryWithVerify) {
  const auto result =
      test::run_websd({"import", "--model", test::fixture_path("tiny-sd15/model"), "--json", "--verify"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto summary = nlohmann::json::parse(result.out);
  ASSERT_EQ(summary.at("components").size(), 5u);
  std::uint64_t total = 0;
  for (const auto& component : summary["components"]) {
    if (component.at("kind") != "model") continue;
    EXPECT_EQ(component.at("weights").at("shards"), 1);
    EXPECT_EQ(component.at("verify").at("values_read"), component.at("parameters"));
    EXPECT_TRUE(component.at("verify").at("non_finite").empty());
    total += component.at("parameters").get<std::uint64_t>();
    const bool clip = component.at("name") == "text_encoder";
    EXPECT_EQ(component.at("naming"), clip ? "text_model_prefix" : "as_stored");
    EXPECT_EQ(component.at("names_normalised"), false);
  }
  EXPECT_EQ(total, 1600672u + 2164452u + 1399879u);  // text encoder + unet + vae of tiny-sd15
  EXPECT_GT(summary.at("peak_rss_bytes").get<std::uint64_t>(), 0u);
}

TEST(ImportCommand, ReportsShardsVariantsAndNormalisedNames) {
  const auto dir =
      test::write_checkpoint_folder("cli-shards", {.text_prefix = false, .variant = "fp16", .unet_shards = 2});
  const auto result = test::run_websd({"import", "--model", dir});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("weights: 2 file(s)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("variant fp16"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("(added: the file stores names without it)"), std::string::npos) << result.out;
}

TEST(ImportCommand, NonexistentFolder) {
  expect_one_error_line(test::run_websd({"import", "--model", "/nonexistent/websd-model"}),
                        "/nonexistent/websd-model: no such file or folder");
}

TEST(ImportCommand, FolderWithoutModelIndex) {
  const std::string dir = test::make_temp_dir("cli-noindex");
  expect_one_error_line(test::run_websd({"import", "--model", dir}), dir + "/model_index.json: missing");
}

TEST(ImportCommand, TruncatedWeightsFile) {
  const auto dir = test::write_checkpoint_folder("cli-trunc");
  const std::string path = dir + "/text_encoder/model.safetensors";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  expect_one_error_line(test::run_websd({"import", "--model", dir}), path);
}

// --verify on broken checkpoints, non-finite weights included: import_verify_test.cpp.

TEST(ImportCommand, MissingModelOptionIsAUsageError) {
  const auto result = test::run_websd({"import"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
}

}  // namespace
}  // namespace websd
