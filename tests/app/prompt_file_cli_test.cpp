// --prompt-file and --negative-prompt-file (generate) and --prompt-file (tokenize) through the real
// binary: text longer than a command line takes, UTF-8 checked, capped, one trailing newline
// dropped, "-" for standard input, and exactly one way to give the prompt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/png_file.h"
#include "support/cli_checks.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

Args generate(const std::string& out, const Args& prompt) {
  Args args = {"generate", "--model", fixture_path("tiny-sd15/model"), "--steps", "1", "--seed", "1", "--out", out};
  args.insert(args.end(), prompt.begin(), prompt.end());
  return args;
}

std::string parameters_of(const std::string& png) {
  for (const PngText& text : png_read_text(png)) {
    if (text.keyword == "parameters") return text.text;
  }
  return "";
}

TEST(PromptFileCli, AMegabytePromptFromAFileMakesTheImage) {
  const std::string dir = make_temp_dir("prompt-file-long");
  // About 1 MB of plain ASCII: eight times what one command-line argument may hold.
  std::string prompt;
  while (prompt.size() < 1'000'000) prompt += "a red boat on a calm sea, ";
  const std::string file = write_file(dir + "/prompt.txt", prompt + "\n");
  const CommandResult result = run_websd(generate(dir + "/out.png", {"--prompt-file", file}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string parameters = parameters_of(dir + "/out.png");
  EXPECT_EQ(parameters.substr(0, prompt.size() + 1), prompt + "\n") << "the file's text, its newline dropped";
}

TEST(PromptFileCli, StandardInputAndTheNegativePromptFile) {
  const std::string dir = make_temp_dir("prompt-file-stdin");
  const std::string negative = write_file(dir + "/negative.txt", "blurry, dark\r\n");
  const CommandResult result = run_websd(
      generate(dir + "/out.png", {"--prompt-file", "-", "--negative-prompt-file", negative}), "a cat from stdin\n");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string parameters = parameters_of(dir + "/out.png");
  EXPECT_EQ(parameters.rfind("a cat from stdin\n", 0), 0u) << parameters;
  EXPECT_NE(parameters.find("Negative prompt: blurry, dark\n"), std::string::npos) << parameters;
  // The same file for tokenize gives the ids of the same text as an argument does.
  const std::string tokenizer = fixture_path("clip-tokenizer");
  const CommandResult from_file = run_websd({"tokenize", "--tokenizer", tokenizer, "--prompt-file", negative});
  const CommandResult from_argument = run_websd({"tokenize", "--tokenizer", tokenizer, "blurry, dark"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, from_argument.out);
}

TEST(PromptFileCli, InvalidOversizedOrSpecialPromptFilesAreRefused) {
  const std::string dir = make_temp_dir("prompt-file-bad");
  const std::string out = dir + "/out.png";
  const std::string invalid = write_file(dir + "/invalid.txt", "a caf\xe9 by the sea");
  expect_error(run_websd(generate(out, {"--prompt-file", invalid})),
               {"--prompt-file " + invalid + ": byte 5 is not valid UTF-8"});
  const std::string big = write_file(dir + "/big.txt", std::string((1 << 20) + 1, 'a'));
  expect_error(run_websd(generate(out, {"--prompt-file", big})),
               {"--prompt-file " + big + ": holds 1048577 bytes, over websd's cap of 1 MiB for a prompt file"});
  const std::string folder = make_temp_dir("prompt-file-folder");
  expect_error(run_websd(generate(out, {"--prompt", "x", "--negative-prompt-file", folder})),
               {"--negative-prompt-file " + folder + ": is a folder, expected a prompt file"});
  expect_error(run_websd(generate(out, {"--prompt-file", "-"}), std::string((1 << 20) + 1, 'b')),
               {"--prompt-file - (standard input): holds more than 1048576 bytes"});
  expect_error(run_websd({"tokenize", "--tokenizer", fixture_path("clip-tokenizer"), "--prompt-file", big}),
               {"over websd's cap of 1 MiB for a prompt file"});
  EXPECT_FALSE(fs::exists(out));
}

TEST(PromptFileCli, ThePromptIsGivenExactlyOneWay) {
  const std::string dir = make_temp_dir("prompt-file-usage");
  const std::string out = dir + "/out.png";
  const std::string file = write_file(dir + "/prompt.txt", "a boat");
  expect_error(run_websd(generate(out, {"--prompt", "x", "--prompt-file", file})),
               {"--prompt and --prompt-file exclude each other"}, 2);
  expect_error(run_websd(generate(out, {"--prompt", "x", "--negative-prompt", "y", "--negative-prompt-file", file})),
               {"--negative-prompt and --negative-prompt-file exclude each other"}, 2);
  expect_error(run_websd(generate(out, {})), {"no prompt: pass --prompt TEXT or --prompt-file FILE"}, 2);
  expect_error(run_websd(generate(out, {"--prompt-file", "-", "--negative-prompt-file", "-"})),
               {"cannot both read standard input"}, 2);
  expect_error(run_websd({"tokenize", "--tokenizer", fixture_path("clip-tokenizer"), "--prompt-file", file, "x"}),
               {"exclude each other"}, 2);
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace websd::test
