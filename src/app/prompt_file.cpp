#include "app/prompt_file.h"

#include <string_view>

#include "core/error.h"
#include "core/utf8.h"
#include "io/input_file.h"

namespace websd::app {

std::string read_prompt_file(const std::string& component, const std::string& option, const std::string& path) {
  std::string text = input_file_read_or_stdin(component, path, input_kinds::kPromptFile, option);
  if (const std::size_t bad = utf8_find_invalid(text); bad != std::string_view::npos) {
    throw Error(component, option + " " + (path == "-" ? "- (standard input)" : path) + ": byte " +
                               std::to_string(bad) + " is not valid UTF-8 (save the prompt as UTF-8 text)");
  }
  if (text.ends_with('\n')) {
    text.pop_back();
    if (text.ends_with('\r')) text.pop_back();
  }
  return text;
}

void require_one_prompt_source(const CLI::Option& text, const CLI::Option& file, bool required) {
  if (text.count() > 0 && file.count() > 0) {
    throw CLI::ValidationError(text.get_name() + " and " + file.get_name() +
                               " exclude each other: give the prompt one way");
  }
  if (required && text.count() == 0 && file.count() == 0) {
    throw CLI::ValidationError("no prompt: pass " + text.get_name() + " TEXT or " + file.get_name() +
                               " FILE (- reads standard input)");
  }
}

}  // namespace websd::app
