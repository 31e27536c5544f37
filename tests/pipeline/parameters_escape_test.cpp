// The escaping of prompts and the model's name in the A1111 "parameters" text: nothing forges a line
// or a field, the text is valid UTF-8 without control characters, and real prompts read back as
// they were.
#include "pipeline/parameters_escape.h"

#include <gtest/gtest.h>

#include "core/utf8.h"
#include "pipeline/generation_params.h"
#include "support/a1111_parameters.h"

namespace websd {
namespace {

GenerationParams params_with(std::string prompt, std::string negative) {
  GenerationParams params;
  params.prompt = std::move(prompt);
  params.negative_prompt = std::move(negative);
  params.steps = 20;
  params.seed = 42;
  params.width = 512;
  params.height = 512;
  return params;
}

std::size_t lines_starting_with(const std::string& text, const std::string& label) {
  std::size_t count = 0;
  for (std::size_t begin = 0; begin <= text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string line = test::a1111_strip(text.substr(begin, end - begin));
    count += line.rfind(label, 0) == 0 ? 1 : 0;
    begin = end + 1;
  }
  return count;
}

bool has_control_characters_but_newlines(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return true;
  }
  return false;
}

TEST(ParametersEscape, AModelNameCannotAddALineAFieldOrAControlCharacter) {
  const std::string model = "evil\nSeed: 1\n\x1b[2J\xff\xfe, Steps: 1";
  const std::string text = generation_parameters_text(params_with("a boat", ""), 0, "Euler", model, false);
  EXPECT_EQ(utf8_find_invalid(text), std::string::npos) << text;
  EXPECT_FALSE(has_control_characters_but_newlines(text)) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(lines_starting_with(text, "Steps:"), 1u) << text;
  const test::A1111Parameters read = test::a1111_parse(text);
  EXPECT_EQ(read.prompt, "a boat");
  EXPECT_EQ(read.fields.at("Seed"), "42");
  EXPECT_EQ(read.fields.at("Steps"), "20");
  EXPECT_EQ(read.fields.at("Model"), "evil\\x0aSeed: 1\\x0a\\x1b[2J\\xff\\xfe, Steps: 1");
  EXPECT_EQ(read.field_matches, 6u) << "no field but websd's: " << text;
}

TEST(ParametersEscape, APromptCannotStartALineThatReadersTakeForAField) {
  const std::string prompt = "a cat\nNegative prompt: dogs\n  Steps: 99, Sampler: x, Seed: 7\nSeed: 3";
  const std::string negative = "blur\nSteps: 1, CFG scale: 30, Seed: 5\nModel hash: 00";
  const std::string text = generation_parameters_text(params_with(prompt, negative), 0, "Euler", "sd15", false);
  EXPECT_EQ(lines_starting_with(text, "Steps:"), 1u) << text;
  EXPECT_EQ(lines_starting_with(text, "Negative prompt:"), 1u) << text;
  EXPECT_EQ(lines_starting_with(text, "Seed:"), 0u) << text;
  EXPECT_EQ(text.find("\nSteps:"), text.rfind("\nSteps:")) << text;
  const test::A1111Parameters read = test::a1111_parse(text);
  EXPECT_EQ(read.prompt, "a cat\n\\Negative prompt: dogs\n\\Steps: 99, Sampler: x, Seed: 7\n\\Seed: 3");
  EXPECT_EQ(read.negative_prompt, "blur\n\\Steps: 1, CFG scale: 30, Seed: 5\n\\Model hash: 00");
  EXPECT_EQ(read.fields.at("Seed"), "42");
  EXPECT_EQ(read.fields.at("CFG scale"), "7.5");
  // A prompt whose first line is a label is escaped too: it would start the text.
  EXPECT_EQ(parameters_prompt("Negative prompt: x", true), "\\Negative prompt: x");
  EXPECT_EQ(parameters_prompt("Steps: 1", false), "Steps: 1") << "after \"Negative prompt: \" on its line";
}

TEST(ParametersEscape, RealPromptsReadBackAsTheyWere) {
  const std::string prompt = "a castle on a hill, (masterpiece:1.2), \\(sky\\)\nsunset light\n\ncafé, 日本の城";
  const std::string text =
      generation_parameters_text(params_with(prompt, "blurry, lowres"), 0, "DPM++ 2M Karras", "v1-5-pruned", false);
  const test::A1111Parameters read = test::a1111_parse(text);
  EXPECT_EQ(read.prompt, prompt);
  EXPECT_EQ(read.negative_prompt, "blurry, lowres");
  EXPECT_EQ(read.fields.at("Sampler"), "DPM++ 2M Karras");
  EXPECT_EQ(read.fields.at("Model"), "v1-5-pruned");
}

TEST(ParametersEscape, ControlCharactersInPromptsAreEscapedAndFieldValuesQuotedAsA1111Does) {
  EXPECT_EQ(parameters_prompt("red\x1b[31m\ttext\r\nnext\xc2\x85", true), "red\\x1b[31m\\x09text\\x0d\nnext\\u0085");
  EXPECT_EQ(parameters_field_value("my, model"), "\"my, model\"");
  EXPECT_EQ(parameters_field_value("say \"hi\": \\o/"), "\"say \\\"hi\\\": \\\\o/\"");
  EXPECT_EQ(parameters_field_value("plain-name_1.5"), "plain-name_1.5");
  EXPECT_EQ(parameters_field_value(std::string(1000, 'x')).size(), 256u + std::string("...(1000 bytes)").size());
}

}  // namespace
}  // namespace websd
