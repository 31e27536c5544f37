#include "pipeline/tokenizer/clip_normalizer.h"

#include "pipeline/tokenizer/unicode/unicode_normalization.h"
#include "pipeline/tokenizer/unicode_classes.h"
#include "pipeline/tokenizer/utf8_text.h"

namespace websd {

std::u32string clip_normalize(std::string_view valid_utf8) {
  const std::u32string code_points = unicode_nfc(utf8_decode(valid_utf8));
  std::u32string out;
  out.reserve(code_points.size());
  bool after_space = false;
  for (const char32_t c : code_points) {
    if (is_white_space(c)) {
      if (!after_space) out.push_back(U' ');
      after_space = true;
      continue;
    }
    after_space = false;
    if (c == 0x130) {
      out.append(U"i\u0307");  // the one unconditional lower-case mapping that yields two code points
    } else {
      out.push_back(unicode_to_lower(c));
    }
  }
  return out;
}

}  // namespace websd
