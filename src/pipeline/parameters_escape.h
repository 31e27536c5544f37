// What makes a prompt or a model's name safe to write into the A1111 "parameters" text
// (generation_params.h): the text stays valid UTF-8 without control characters, and nothing a user
// or a folder name brings in can add a line or a field that a reader takes for websd's own.
//
// How readers parse the text: AUTOMATIC1111 takes the fields from the last line only (`Key: value`
// pairs separated by commas, a value with ',' ':' or a newline written as a JSON string) and every
// other line as the prompt, up to a line that starts (after blanks) with "Negative prompt:"; other
// readers cut the text at the first "\nNegative prompt:" and the first "\nSteps:". Hence the rule:
//  - prompts keep their newlines (A1111 joins a prompt's lines with "\n", so a multi-line prompt
//    reads back as it was), but a line that would begin, after leading spaces, with a label (a
//    letter, digit or '_', then letters, digits, '_', ' ', '-', '/', then ':', as "Steps:",
//    "Negative prompt:", "Seed:") gets a backslash before the label: "\Steps: 99" is prompt text
//    for every reader;
//  - a value of the fields line (the model's name) holding ',', ':' or '"' is written as A1111 writes
//    such values, a JSON string ("my, model"), which A1111 reads back whole;
//  - everywhere, control characters (C0 but a prompt's newline, DEL, C1, U+2028/U+2029) and bytes
//    that are not UTF-8 are escaped as error messages escape them (core/message_text.h): "\x1b".
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace websd {

// A prompt for the text. `starts_line`: its first line begins a line of the text (the prompt does;
// the negative prompt follows "Negative prompt: " on its first line).
std::string parameters_prompt(std::string_view prompt, bool starts_line);

// A value of the fields line, at most 256 bytes of it (longer ones end "...(N bytes)").
std::string parameters_field_value(std::string_view value);

}  // namespace websd
