#include "pipeline/tokenizer/clip_normalizer.h"

#include <utf8proc.h>

#include <vector>

#include "core/error.h"
#include "pipeline/tokenizer/unicode_classes.h"

namespace websd {
namespace {

constexpr utf8proc_option_t kNfcOptions = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);

// Canonical decomposition, reordering and composition through utf8proc's code-point buffer API,
// which, unlike utf8proc_NFC, does not stop at an embedded NUL.
std::vector<utf8proc_int32_t> nfc_code_points(std::string_view text) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto length = static_cast<utf8proc_ssize_t>(text.size());
  std::vector<utf8proc_int32_t> buffer(text.size() + 1);
  utf8proc_ssize_t count = 0;
  for (;;) {
    count = utf8proc_decompose(bytes, length, buffer.data(), static_cast<utf8proc_ssize_t>(buffer.size()), kNfcOptions);
    if (count < 0) {
      throw Error("tokenizer", std::string("prompt normalisation failed: ") + utf8proc_errmsg(count) +
                                   " (pass the prompt through utf8_replace_invalid first)");
    }
    if (static_cast<std::size_t>(count) <= buffer.size()) break;
    buffer.resize(static_cast<std::size_t>(count));  // decomposition grew the text: retry with room
  }
  count = utf8proc_normalize_utf32(buffer.data(), count, kNfcOptions);
  buffer.resize(static_cast<std::size_t>(count));
  return buffer;
}

}  // namespace

std::u32string clip_normalize(std::string_view valid_utf8) {
  const std::vector<utf8proc_int32_t> code_points = nfc_code_points(valid_utf8);
  std::u32string out;
  out.reserve(code_points.size());
  bool after_space = false;
  for (const utf8proc_int32_t code_point : code_points) {
    const auto c = static_cast<char32_t>(code_point);
    if (is_white_space(c)) {
      if (!after_space) out.push_back(U' ');
      after_space = true;
      continue;
    }
    after_space = false;
    if (c == 0x130) {
      out.append(U"i\u0307");  // the one unconditional lower-case mapping that yields two code points
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(code_point)));
    }
  }
  return out;
}

}  // namespace websd
