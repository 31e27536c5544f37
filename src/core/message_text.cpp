#include "core/message_text.h"

#include <algorithm>
#include <cstdint>

#include "core/utf8.h"

namespace websd {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

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
