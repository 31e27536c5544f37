#include "pipeline/parameters_escape.h"

#include <limits>

#include "core/message_text.h"

namespace websd {
namespace {

constexpr std::size_t kMaxFieldValueBytes = 256;

bool label_char(char c, bool first) {
  const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  return word || (!first && (c == ' ' || c == '-' || c == '/'));
}

// Where the label that `line` begins with (after leading spaces) starts, or npos when it begins with none.
std::size_t label_start(std::string_view line) {
  const std::size_t start = line.find_first_not_of(' ');
  if (start == std::string_view::npos || !label_char(line[start], true)) return std::string_view::npos;
  for (std::size_t at = start + 1; at < line.size(); ++at) {
    if (line[at] == ':') return start;
    if (!label_char(line[at], false)) break;
  }
  return std::string_view::npos;
}

// A JSON string, as A1111 quotes a field value (json.dumps): only '"' and '\' need escaping here,
// since message_safe has escaped every control character already.
std::string json_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string parameters_prompt(std::string_view prompt, bool starts_line) {
  std::string out;
  out.reserve(prompt.size());
  std::size_t begin = 0;
  for (bool first = true;; first = false) {
    const std::size_t end = prompt.find('\n', begin);
    std::string line = message_safe(prompt.substr(begin, end - begin), std::numeric_limits<std::size_t>::max());
    if (!first) out += '\n';
    if (const std::size_t label = label_start(line); label != std::string::npos && (starts_line || !first)) {
      line.insert(label, 1, '\\');
    }
    out += line;
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return out;
}

std::string parameters_field_value(std::string_view value) {
  const std::string safe = message_safe(value, kMaxFieldValueBytes);
  return safe.find_first_of(",:\"") == std::string::npos ? safe : json_quoted(safe);
}

}  // namespace websd
