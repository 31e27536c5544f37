#include "core/utf8.h"

namespace websd {

std::size_t utf8_sequence_length(std::string_view text, std::size_t at, std::size_t* subpart) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the first continuation byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    if (subpart != nullptr) *subpart = 1;  // C0, C1, F5..FF and stray continuation bytes start nothing
    return 0;
  }
  std::size_t seen = 1;
  while (seen < length && at + seen < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at + seen]);
    const bool ok = seen == 1 ? byte >= low && byte <= high : byte >= 0x80 && byte <= 0xBF;
    if (!ok) break;
    ++seen;
  }
  if (seen == length) return length;
  if (subpart != nullptr) *subpart = seen;
  return 0;
}

std::size_t utf8_find_invalid(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_sequence_length(text, at);
    if (length == 0) return at;
    at += length;
  }
  return std::string_view::npos;
}

std::string utf8_or_escaped(std::string_view bytes) {
  if (utf8_find_invalid(bytes) == std::string_view::npos) return std::string(bytes);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string text;
  for (std::size_t at = 0; at < bytes.size();) {
    std::size_t subpart = 1;
    const std::size_t length = utf8_sequence_length(bytes, at, &subpart);
    if (length > 0) {
      text.append(bytes.substr(at, length));
      at += length;
      continue;
    }
    for (std::size_t i = 0; i < subpart; ++i) {
      const auto byte = static_cast<unsigned char>(bytes[at + i]);
      text += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
    }
    at += subpart;
  }
  return text;
}

}  // namespace websd
