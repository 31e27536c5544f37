#include "io/json_file.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/message_text.h"

namespace websd {
namespace {

// Stand-ins for the non-standard literals: strings no real config contains, swapped back to
// numbers after parsing. Strings are skipped while scanning, so "NaN" inside a string stays text.
constexpr std::string_view kPosInf = "\"@websd-nonstandard-literal:+inf\"";
constexpr std::string_view kNegInf = "\"@websd-nonstandard-literal:-inf\"";
constexpr std::string_view kNaN = "\"@websd-nonstandard-literal:nan\"";

std::string replace_nonstandard_literals(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.substr(i, 9) == "-Infinity") {
      out += kNegInf;
      i += 8;
    } else if (text.substr(i, 8) == "Infinity") {
      out += kPosInf;
      i += 7;
    } else if (text.substr(i, 3) == "NaN") {
      out += kNaN;
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

void restore_nonstandard_literals(nlohmann::json& value) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    const auto unquoted = [](std::string_view quoted) { return quoted.substr(1, quoted.size() - 2); };
    if (text == unquoted(kPosInf))
      value = std::numeric_limits<double>::infinity();
    else if (text == unquoted(kNegInf))
      value = -std::numeric_limits<double>::infinity();
    else if (text == unquoted(kNaN))
      value = std::numeric_limits<double>::quiet_NaN();
  } else if (value.is_structured()) {
    for (auto& child : value) restore_nonstandard_literals(child);
  }
}

// The inverse of restore_nonstandard_literals, on a copy about to be dumped.
void mark_nonstandard_numbers(nlohmann::json& value) {
  const auto unquoted = [](std::string_view quoted) { return std::string(quoted.substr(1, quoted.size() - 2)); };
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double number = value.get<double>();
    value = std::isnan(number) ? unquoted(kNaN) : unquoted(number > 0 ? kPosInf : kNegInf);
  } else if (value.is_structured()) {
    for (auto& child : value) mark_nonstandard_numbers(child);
  }
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// Configs nest a few levels; a limit keeps hostile nesting from exhausting the stack in the
// recursive walks over the parsed value (restore_nonstandard_literals, destruction).
constexpr int kMaxJsonDepth = 256;

// nlohmann's DOM builder with a depth limit checked as containers open (nlohmann's callback parser
// would do the same, but rescans the parent object at every nested object's end: quadratic).
class DepthLimitedDom : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  DepthLimitedDom(nlohmann::json& result, const std::string& origin)
      : json_sax_dom_parser(result, true), origin_(origin) {}

  bool start_object(std::size_t size) { return enter() && json_sax_dom_parser::start_object(size); }
  bool end_object() { return leave() && json_sax_dom_parser::end_object(); }
  bool start_array(std::size_t size) { return enter() && json_sax_dom_parser::start_array(size); }
  bool end_array() { return leave() && json_sax_dom_parser::end_array(); }

 private:
  bool enter() {
    if (++depth_ > kMaxJsonDepth) {
      throw Error("json", origin_ + ": nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
    }
    return true;
  }
  bool leave() {
    --depth_;
    return true;
  }

  const std::string& origin_;
  int depth_ = 0;
};

// A scalar other than a string as JSON writes it; non-finite numbers as json_dump writes them.
std::string scalar_text(const nlohmann::json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double number = value.get<double>();
    return std::isnan(number) ? "NaN" : (number > 0 ? "Infinity" : "-Infinity");
  }
  if (value.is_binary()) return "binary data of " + std::to_string(value.get_binary().size()) + " bytes";
  if (value.is_discarded()) return "(discarded)";
  return value.dump();  // a number, true, false or null: a few bytes
}

std::string quoted_text(std::string_view text, std::size_t max_bytes) {
  std::string quoted(1, '"');  // appended: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string
  quoted.append(message_safe(text, max_bytes)).push_back('"');
  return quoted;
}

// Appends the compact JSON of `value` to `out` while `out` stays within `limit` bytes; false as soon
// as it would not (so the work done is bounded by `limit`, whatever the size of `value`).
bool append_bounded(const nlohmann::json& value, std::string& out, std::size_t limit, int depth) {
  if (out.size() > limit || depth > 4) return false;
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() + 2 > limit - out.size()) return false;
    out += quoted_text(text, text.size() * 6);  // whole, escaped
  } else if (value.is_array()) {
    out += '[';
    for (auto item = value.begin(); item != value.end(); ++item) {
      if (item != value.begin()) out += ',';
      if (!append_bounded(*item, out, limit, depth + 1)) return false;
    }
    out += ']';
  } else if (value.is_object()) {
    out += '{';
    for (auto item = value.begin(); item != value.end(); ++item) {
      if (item != value.begin()) out += ',';
      if (item.key().size() + 3 > limit - std::min(limit, out.size())) return false;
      out += quoted_text(item.key(), item.key().size() * 6) + ':';
      if (!append_bounded(item.value(), out, limit, depth + 1)) return false;
    }
    out += '}';
  } else {
    out += scalar_text(value);
  }
  return out.size() <= limit;
}

}  // namespace

std::string json_preview(const nlohmann::json& value, std::size_t max_bytes) {
  if (value.is_string()) return quoted_text(value.get_ref<const std::string&>(), max_bytes);
  if (!value.is_structured()) return message_safe(scalar_text(value), max_bytes);
  std::string text;
  if (append_bounded(value, text, max_bytes, 0)) return text;
  const std::string count = std::to_string(value.size());
  return value.is_array() ? "an array of " + count + " values" : "an object of " + count + " keys";
}

nlohmann::json json_parse(std::string_view text, const std::string& origin) {
  nlohmann::json value;
  // Text without a non-standard literal is parsed as it is, and its strings are left alone: a
  // manifest of megabytes is not copied and walked again (in WebAssembly, at every load).
  const bool nonstandard =
      text.find("Infinity") != std::string_view::npos || text.find("NaN") != std::string_view::npos;
  try {
    DepthLimitedDom sax(value, origin);
    if (nonstandard) {
      nlohmann::json::sax_parse(replace_nonstandard_literals(text), &sax);
    } else {
      nlohmann::json::sax_parse(text, &sax);
    }
  } catch (const nlohmann::json::exception& error) {
    throw Error("json", origin + ": " + message_safe(error.what(), 300));  // "last read:" may echo megabytes
  }
  if (nonstandard) restore_nonstandard_literals(value);
  return value;
}

std::string json_dump(const nlohmann::json& value, int indent) {
  nlohmann::json marked = value;
  mark_nonstandard_numbers(marked);
  std::string text = marked.dump(indent);
  replace_all(text, kPosInf, "Infinity");
  replace_all(text, kNegInf, "-Infinity");
  replace_all(text, kNaN, "NaN");
  return text;
}

nlohmann::json json_read_file(const std::string& path, const InputKind& kind) {
  return json_parse(input_file_read("json", path, kind), path);
}

}  // namespace websd
