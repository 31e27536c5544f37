#include "core/message_text.h"

#include <algorithm>
#include <cstdint>

namespace websd {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Length of the strict UTF-8 sequence starting at text[at] (overlong forms, surrogates and code
// points above U+10FFFF refused), or 0 when the byte there does not start one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // allowed range of the first continuation byte
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // overlong
    if (lead == 0xed) high = 0x9f;  // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // overlong
    if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[at + k]);
    if (k == 1 ? (byte < low || byte > high) : (byte < 0x80 || byte > 0xbf)) return 0;
  }
  return length;
}

std::uint32_t utf8_code_point(std::string_view sequence) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(sequence[k])); };
  switch (sequence.size()) {
    case 2:
      return ((byte(0) & 0x1f) << 6) | (byte(1) & 0x3f);
    case 3:
      return ((byte(0) & 0x0f) << 12) | ((byte(1) & 0x3f) << 6) | (byte(2) & 0x3f);
    case 4:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3f) << 12) | ((byte(2) & 0x3f) << 6) | (byte(3) & 0x3f);
    default:
      return byte(0);
  }
}

bool code_point_needs_escape(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9f) || code == 0x2028 || code == 0x2029;
}

}  // namespace

std::string message_safe(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 24);
  std::size_t at = 0;
  while (at < text.size()) {
    char unit[8];
    std::size_t unit_size = 0;
    std::size_t consumed = utf8_sequence_length(text, at);
    const auto lead = static_cast<unsigned char>(text[at]);
    if (consumed == 0 || (consumed == 1 && (lead < 0x20 || lead == 0x7f))) {
      consumed = 1;  // a control byte or one that is not UTF-8: \xHH
      unit[unit_size++] = '\\';
      unit[unit_size++] = 'x';
      unit[unit_size++] = kHexDigits[lead >> 4];
      unit[unit_size++] = kHexDigits[lead & 0x0f];
    } else if (const std::uint32_t code = utf8_code_point(text.substr(at, consumed)); code_point_needs_escape(code)) {
      unit[unit_size++] = '\\';
      unit[unit_size++] = 'u';
      for (int shift = 12; shift >= 0; shift -= 4) unit[unit_size++] = kHexDigits[(code >> shift) & 0x0f];
    } else {
      std::copy_n(text.data() + at, consumed, unit);
      unit_size = consumed;
    }
    if (out.size() + unit_size > max_bytes) break;
    out.append(unit, unit_size);
    at += consumed;
  }
  if (at < text.size()) out.append("...(").append(std::to_string(text.size())).append(" bytes)");
  return out;
}

std::string message_quote(std::string_view text, std::size_t max_bytes) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string quoted(1, '\'');
  quoted.append(message_safe(text, max_bytes)).push_back('\'');
  return quoted;
}

}  // namespace websd
