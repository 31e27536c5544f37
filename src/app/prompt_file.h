// Prompts given as files (--prompt-file, --negative-prompt-file): argv caps one argument at 128 KiB,
// so long text comes through a file, or through standard input as "-". Shared by every command that
// takes a prompt. Not thread-safe where it reads standard input (once per process).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace websd::app {

// The text of the prompt file `path` given to `option` ("--prompt-file"): "-" reads standard input.
// Read under the input rule (io/input_file.h: a regular file, at most input_kinds::kPromptFile
// bytes), checked as UTF-8 (the offset of the first invalid byte is named), and without one trailing
// line end ("\n" or "\r\n"), as $(cat F) gives it. Throws websd::Error(component, ...).
std::string read_prompt_file(const std::string& component, const std::string& option, const std::string& path);

// Throws CLI::ValidationError (a usage error) when both `text` and `file` were given, or, if
// `required`, when neither was.
void require_one_prompt_source(const CLI::Option& text, const CLI::Option& file, bool required);

}  // namespace websd::app
