#include "pipeline/tokenizer/utf8_text.h"

#include <cstddef>

#include "core/error.h"

namespace websd {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(unsigned char byte, unsigned char low = 0x80, unsigned char high = 0xBF) {
  return byte >= low && byte <= high;
}

// Length of the well-formed sequence starting at `pos`, or 0 when it is ill-formed; in that case
// `subpart` receives the length of the maximal subpart to replace (at least 1).
std::size_t well_formed_length(std::string_view bytes, std::size_t pos, std::size_t& subpart) {
  const auto lead = static_cast<unsigned char>(bytes[pos]);
  std::size_t length = 0;
  unsigned char second_low = 0x80;
  unsigned char second_high = 0xBF;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_low = 0xA0;   // no overlong forms
    if (lead == 0xED) second_high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_low = 0x90;   // no overlong forms
    if (lead == 0xF4) second_high = 0x8F;  // nothing above U+10FFFF
  } else {
    subpart = 1;  // C0, C1, F5..FF and stray continuation bytes never start a sequence
    return 0;
  }
  std::size_t seen = 1;
  while (seen < length && pos + seen < bytes.size()) {
    const auto byte = static_cast<unsigned char>(bytes[pos + seen]);
    const bool ok = seen == 1 ? is_continuation(byte, second_low, second_high) : is_continuation(byte);
    if (!ok) break;
    ++seen;
  }
  if (seen == length) return length;
  subpart = seen;
  return 0;
}

}  // namespace

std::string utf8_replace_invalid(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    std::size_t subpart = 0;
    const std::size_t length = well_formed_length(bytes, pos, subpart);
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
    const std::size_t length = well_formed_length(valid_utf8, pos, subpart);
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
