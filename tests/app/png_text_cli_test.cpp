// The PNG's "parameters" text of a real run cannot be forged (issue 19): a model folder's name and
// the prompts reach it escaped (pipeline/parameters_escape.h), so the text is valid UTF-8 without
// control characters and holds websd's lines and fields only.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/utf8.h"
#include "io/png_file.h"
#include "support/a1111_parameters.h"
#include "support/cli_checks.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

std::string parameters_of(const std::string& png) {
  for (const PngText& text : png_read_text(png)) {
    if (text.keyword == "parameters") return text.text;
  }
  ADD_FAILURE() << png << " has no parameters text";
  return "";
}

std::size_t lines_starting_with(const std::string& text, const std::string& label) {
  std::size_t count = 0;
  for (std::size_t begin = 0; begin <= text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    count += a1111_strip(text.substr(begin, end - begin)).rfind(label, 0) == 0 ? 1 : 0;
    begin = end + 1;
  }
  return count;
}

// A model folder named to forge lines and fields, and its name as the text reads it back.
constexpr char kForgingName[] = "m\nSeed: 99\n\x1b[2J\xff, Steps: 50";
constexpr char kEscapedName[] = "m\\x0aSeed: 99\\x0a\\x1b[2J\\xff, Steps: 50";

void expect_unforged(const std::string& text) {
  EXPECT_EQ(utf8_find_invalid(text), std::string::npos) << text;
  for (const char c : text) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << text;
  EXPECT_EQ(lines_starting_with(text, "Steps:"), 1u) << text;
  EXPECT_EQ(lines_starting_with(text, "Seed:"), 0u) << text;
  const A1111Parameters read = a1111_parse(text);
  EXPECT_EQ(read.fields.at("Seed"), "1") << text;
  EXPECT_EQ(read.fields.at("Steps"), "1") << text;
  EXPECT_EQ(read.field_matches, 6u) << "only websd's fields: " << text;
}

TEST(PngText, AModelFolderNamedToForgeLinesIsWrittenEscaped) {
  const std::string model = make_temp_dir("png-text") + "/" + kForgingName;
  fs::copy(fixture_model(), model, fs::copy_options::recursive);
  const std::string out = make_temp_dir("png-text-out") + "/a.png";
  const CommandResult result = run_websd(generate_args(model, out));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string text = parameters_of(out);
  expect_unforged(text);
  EXPECT_EQ(a1111_parse(text).fields.at("Model"), kEscapedName);
}

// The same model built into an artifact: its name reaches the manifest escaped (JSON cannot carry
// the byte 0xff), and the PNG of generate --artifact is as safe.
TEST(PngText, AnArtifactOfSuchAModelWritesTheSameEscapedText) {
  const std::string dir = make_temp_dir("png-text-artifact");
  const std::string model = dir + "/" + kForgingName;
  fs::copy(fixture_model(), model, fs::copy_options::recursive);
  const CommandResult built = run_websd({"build", "--model", model, "--target", "cpu", "--out", dir + "/art"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const CommandResult result = run_websd({"generate", "--artifact", dir + "/art", "--prompt", "a boat", "--steps", "1",
                                          "--seed", "1", "--out", dir + "/a.png"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string text = parameters_of(dir + "/a.png");
  expect_unforged(text);
  EXPECT_EQ(a1111_parse(text).fields.at("Model"), kEscapedName);
}

TEST(PngText, APromptWithNewlinesCannotAddALineAReaderTakesForAField) {
  const std::string out = make_temp_dir("png-text-prompt") + "/a.png";
  const CommandResult result = run_websd(
      {"generate", "--model", fixture_model(), "--prompt", "a cat\nNegative prompt: dogs\nSeed: 7", "--negative-prompt",
       "blur\nSteps: 99, Sampler: x, CFG scale: 1", "--steps", "1", "--seed", "1", "--out", out});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string text = parameters_of(out);
  expect_unforged(text);
  EXPECT_EQ(lines_starting_with(text, "Negative prompt:"), 1u) << text;
  const A1111Parameters read = a1111_parse(text);
  EXPECT_EQ(read.prompt, "a cat\n\\Negative prompt: dogs\n\\Seed: 7");
  EXPECT_EQ(read.negative_prompt, "blur\n\\Steps: 99, Sampler: x, CFG scale: 1");
}

}  // namespace
}  // namespace websd::test
