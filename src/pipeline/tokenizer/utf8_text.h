// UTF-8 helpers for prompts: repair of ill-formed input and encoding of code points.
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace websd {

// Returns `bytes` with every ill-formed subsequence replaced by U+FFFD, exactly as Python's
// bytes.decode("utf-8", errors="replace") does (one U+FFFD per maximal subpart, the Unicode
// "substitution of maximal subparts" practice): overlong forms, surrogates (U+D800..U+DFFF), code
// points above U+10FFFF, stray continuation bytes and truncated sequences are all replaced.
std::string utf8_replace_invalid(std::string_view bytes);

// The code points of well-formed UTF-8; throws websd::Error at the first ill-formed byte (pass
// untrusted text through utf8_replace_invalid first).
std::u32string utf8_decode(std::string_view valid_utf8);

// Appends the UTF-8 encoding of a valid code point (not a surrogate, at most U+10FFFF).
void utf8_append(std::string& out, char32_t code_point);

}  // namespace websd
