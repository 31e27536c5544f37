// Unicode operations of the CLIP tokenizer on websd's own tables (unicode_tables.h): NFC
// normalisation, simple lower-case mapping, letter/number classes and canonical combining classes.
// The same code runs natively and in WebAssembly; tests compare it with utf8proc over every code
// point. Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace websd {

// Canonical decomposition, canonical reordering and canonical composition (Unicode's NFC, with
// composition exclusions), of code points that are valid scalar values.
std::u32string unicode_nfc(std::u32string_view text);

// The simple (one code point) lower-case mapping; the code point itself when it has none.
char32_t unicode_to_lower(char32_t code_point);

// General category L* (Lu, Ll, Lt, Lm, Lo) and N* (Nd, Nl, No).
bool unicode_is_letter(char32_t code_point);
bool unicode_is_number(char32_t code_point);

int unicode_combining_class(char32_t code_point);

}  // namespace websd
