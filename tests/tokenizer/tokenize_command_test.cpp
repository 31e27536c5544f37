// `websd tokenize` as a user runs it.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/fixtures.h"
#include "support/run_command.h"
#include "tokenizer_test_support.h"

namespace websd::test {
namespace {

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

std::string json_line(const std::vector<TokenId>& ids) {
  std::string line = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ',';
    line += std::to_string(ids[i]);
  }
  return line + "]\n";
}

TEST(TokenizeCommand, PrintsPaddedIdsOfAFixturePrompt) {
  const TokenizerRefs& refs = tokenizer_refs();
  const auto result = run_websd({"tokenize", "--tokenizer", fixture_path("clip-tokenizer"), refs.prompts[0]});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, json_line(refs.sd1_padded[0]));
  EXPECT_EQ(result.err, "");
}

TEST(TokenizeCommand, PrintsOneLinePerPromptWithoutPadding) {
  const TokenizerRefs& refs = tokenizer_refs();
  const auto result = run_websd(
      {"tokenize", "--tokenizer", fixture_path("clip-tokenizer-sd2"), "--no-pad", refs.prompts[4], refs.prompts[2]});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, json_line(refs.sd2_unpadded[4]) + json_line(refs.sd2_unpadded[2]));
}

TEST(TokenizeCommand, AcceptsAModelFolder) {
  const TokenizerRefs& refs = tokenizer_refs();
  const auto result = run_websd({"tokenize", "--tokenizer", fixture_path("tiny-sd15/model"), refs.prompts[25]});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, json_line(refs.sd1_padded[25]));
}

TEST(TokenizeCommand, MissingTokenizerOptionIsOneErrorLine) {
  const auto result = run_websd({"tokenize", "a cat"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("--tokenizer"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST(TokenizeCommand, NonexistentFolderIsOneErrorLine) {
  const auto result = run_websd({"tokenize", "--tokenizer", "/nonexistent/websd-model", "a cat"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("/nonexistent/websd-model"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST(TokenizeCommand, MalformedVocabIsOneErrorLine) {
  const std::string folder = make_temp_dir("cli-bad-vocab");
  write_text_file(folder, "vocab.json", "not json");
  write_text_file(folder, "merges.txt", "a b\n");
  const auto result = run_websd({"tokenize", "--tokenizer", folder, "a cat"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find(folder + "/vocab.json"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace websd::test
