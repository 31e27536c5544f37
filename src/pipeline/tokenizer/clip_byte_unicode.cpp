#include "pipeline/tokenizer/clip_byte_unicode.h"

namespace websd {
namespace {

std::string utf8_encode(char32_t code_point) {
  std::string out;
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else {  // byte-level BPE only needs code points below 0x800
    out += static_cast<char>(0xc0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  }
  return out;
}

std::array<std::string, 256> build_table() {
  // Printable Latin-1 bytes stand for themselves; the rest take code points 256, 257, ... in byte order.
  const auto is_printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae); };
  std::array<std::string, 256> table;
  char32_t next_extra = 256;
  for (int b = 0; b < 256; ++b) {
    table[b] = utf8_encode(is_printable(b) ? static_cast<char32_t>(b) : next_extra++);
  }
  return table;
}

}  // namespace

const std::array<std::string, 256>& clip_byte_to_unicode() {
  static const std::array<std::string, 256> table = build_table();
  return table;
}

}  // namespace websd
