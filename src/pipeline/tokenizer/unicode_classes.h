// The character classes of CLIP's pre-tokenizer regex (\s, \p{L}, \p{N}), answered per code point from
// websd's Unicode tables (unicode/unicode_tables.h) instead of a regex engine. Pure functions, thread-safe.
#pragma once

namespace websd {

// Unicode's White_Space property: what \s matches in the Oniguruma engine behind Hugging Face tokenizers
// (ASCII tab..carriage return, space, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028/9, U+202F,
// U+205F, U+3000). Unlike Python's str.isspace it excludes the separators U+001C..U+001F.
bool is_white_space(char32_t code_point);
// General category L* (Lu, Ll, Lt, Lm, Lo).
bool is_letter(char32_t code_point);
// General category N* (Nd, Nl, No).
bool is_number(char32_t code_point);

}  // namespace websd
