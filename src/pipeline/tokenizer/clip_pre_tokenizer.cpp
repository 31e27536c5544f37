#include "pipeline/tokenizer/clip_pre_tokenizer.h"

#include <array>

#include "pipeline/tokenizer/unicode_classes.h"

namespace websd {
namespace {

// The literal alternatives of the regex, in its order. All are lower case, as normalised text is.
constexpr std::array<std::u32string_view, 2> kSpecialSpellings = {U"<|startoftext|>", U"<|endoftext|>"};
constexpr std::array<std::u32string_view, 7> kContractions = {U"'s", U"'t", U"'re", U"'ve", U"'m", U"'ll", U"'d"};

template <std::size_t N>
std::size_t literal_length_at(const std::array<std::u32string_view, N>& literals, std::u32string_view text,
                              std::size_t pos) {
  for (const std::u32string_view literal : literals) {
    if (text.substr(pos, literal.size()) == literal) return literal.size();
  }
  return 0;
}

bool is_symbol(char32_t c) { return !is_white_space(c) && !is_letter(c) && !is_number(c); }

}  // namespace

void clip_pre_tokenize(std::u32string_view text, std::vector<TextSpan>& pieces) {
  constexpr std::size_t kBracket = 2;  // "<|" and "|>"
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char32_t c = text[pos];
    std::size_t end = pos + 1;
    if (is_white_space(c)) {
      pos = end;
      continue;
    }
    if (const std::size_t special = c == U'<' ? literal_length_at(kSpecialSpellings, text, pos) : 0; special > 0) {
      end = pos + special;
      pieces.push_back({pos, pos + kBracket});  // GPT-2's regex splits the spelling into three pieces
      pieces.push_back({pos + kBracket, end - kBracket});
      pieces.push_back({end - kBracket, end});
      pos = end;
      continue;
    }
    if (const std::size_t contraction = c == U'\'' ? literal_length_at(kContractions, text, pos) : 0; contraction > 0) {
      end = pos + contraction;
    } else if (is_letter(c)) {
      while (end < text.size() && is_letter(text[end])) ++end;
    } else if (!is_number(c)) {  // a number is a piece of one digit
      while (end < text.size() && is_symbol(text[end])) ++end;
    }
    pieces.push_back({pos, end});
    pos = end;
  }
}

}  // namespace websd
