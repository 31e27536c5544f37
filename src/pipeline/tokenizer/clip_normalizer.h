// The text normalisation of CLIP's Hugging Face tokenizer (its tokenizer.json `normalizer`):
//   NFC  ->  every run of White_Space becomes one ' '  ->  lower case per code point.
// Lower-casing follows Rust's char::to_lowercase, which the fast tokenizer uses: the full but
// unconditional Unicode mapping (so a final capital sigma becomes σ, not ς; 'İ' becomes "i̇").
// Pure function, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace websd {

// `valid_utf8` must be well-formed (see utf8_replace_invalid); throws websd::Error otherwise.
std::u32string clip_normalize(std::string_view valid_utf8);

}  // namespace websd
