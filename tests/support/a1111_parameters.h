// AUTOMATIC1111's reading of a "parameters" text (modules/infotext_utils.py,
// parse_generation_parameters), restated for tests of what websd writes: the fields come from the
// last line when it holds at least three `Key: value` pairs (a value in double quotes is a JSON
// string), every other line is prompt text until a line that starts, after blanks, with
// "Negative prompt:". Header-only; also in the WebAssembly tests.
#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

namespace websd::test {

struct A1111Parameters {
  std::string prompt;
  std::string negative_prompt;
  std::map<std::string, std::string> fields;
  std::size_t field_matches = 0;  // pairs on the last line, repeated keys included
};

inline std::string a1111_strip(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(" \t\r\n\f\v");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n\f\v") - begin + 1);
}

// A JSON string's content: enough of json.loads for what quoting makes (\" and \\).
inline std::string a1111_unquote(const std::string& value) {
  if (value.size() < 2 || value.front() != '"' || value.back() != '"') return value;
  std::string out;
  for (std::size_t i = 1; i + 1 < value.size(); ++i) {
    if (value[i] == '\\' && i + 2 < value.size()) ++i;
    out += value[i];
  }
  return out;
}

inline A1111Parameters a1111_parse(const std::string& text) {
  static const std::regex pair(R"re(\s*(\w[\w \-/]+):\s*("(?:\\.|[^\\"])+"|[^,]*)(?:,|$))re");
  std::vector<std::string> lines;
  const std::string stripped = a1111_strip(text);
  for (std::size_t begin = 0;;) {
    const std::size_t end = stripped.find('\n', begin);
    lines.push_back(stripped.substr(begin, end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  std::string last = lines.back();
  lines.pop_back();
  const auto matches = [&](const std::string& line) {
    return std::distance(std::sregex_iterator(line.begin(), line.end(), pair), std::sregex_iterator());
  };
  if (matches(last) < 3) {
    lines.push_back(last);
    last.clear();
  }
  A1111Parameters result;
  bool negative = false;
  for (std::string line : lines) {
    line = a1111_strip(line);
    if (line.rfind("Negative prompt:", 0) == 0) {
      negative = true;
      line = a1111_strip(line.substr(16));
    }
    std::string& into = negative ? result.negative_prompt : result.prompt;
    into += (into.empty() ? "" : "\n") + line;
  }
  for (auto it = std::sregex_iterator(last.begin(), last.end(), pair); it != std::sregex_iterator(); ++it) {
    result.fields[(*it)[1].str()] = a1111_unquote((*it)[2].str());
    ++result.field_matches;
  }
  return result;
}

}  // namespace websd::test
