#include "pipeline/tokenizer/utf8_text.h"

#include <cstddef>

#include "core/error.h"
#include "core/utf8.h"

namespace websd {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string utf8_replace_invalid(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    std::size_t subpart = 0;
    const std::size_t length = utf8_sequence_length(bytes, pos, &subpart);
    if (length > 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
    } else {
      out.append(kReplacement);
      pos += subpart;
    }
  }
  return out;
}

std::u32string utf8_decode(std::string_view valid_utf8) {
  std::u32string out;
  out.reserve(valid_utf8.size());
  std::size_t pos = 0;
  while (pos < valid_utf8.size()) {
    std::size_t subpart = 0;
    const std::size_t length = utf8_sequence_length(valid_utf8, pos, &subpart);
    if (length == 0) {
      throw Error("tokenizer", "ill-formed UTF-8 at byte " + std::to_string(pos) +
                                   " (pass the text through utf8_replace_invalid first)");
    }
    const auto lead = static_cast<unsigned char>(valid_utf8[pos]);
    char32_t code_point = length == 1 ? lead : lead & (0xFF >> (length + 1));
    for (std::size_t i = 1; i < length; ++i) {
      code_point = (code_point << 6) | (static_cast<unsigned char>(valid_utf8[pos + i]) & 0x3F);
    }
    out.push_back(code_point);
    pos += length;
  }
  return out;
}

void utf8_append(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

}  // namespace websd
