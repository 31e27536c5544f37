// Strict UTF-8 well-formedness (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing
// above U+10FFFF), the one check behind message escaping, safetensors headers and the tokenizer's
// prompt repair. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace websd {

// Length of the well-formed sequence starting at text[at], or 0 when it is ill-formed there; then
// `subpart`, if given, receives the length of the maximal subpart to replace or skip (at least 1).
std::size_t utf8_sequence_length(std::string_view text, std::size_t at, std::size_t* subpart = nullptr);

// Offset of the first byte that breaks well-formed UTF-8, or npos when the text is valid.
std::size_t utf8_find_invalid(std::string_view text);

// `bytes` as text for places that hold only UTF-8 (JSON, PNG text chunks): unchanged when it is
// well-formed, else each byte that breaks it written as \xHH. For paths, which are bytes on Linux:
// a display form that shows where the name is odd; nothing opens a file by it.
std::string utf8_or_escaped(std::string_view bytes);

}  // namespace websd
