// The byte <-> Unicode mapping of byte-level BPE (GPT-2, CLIP): every byte value is given a
// printable code point so that BPE vocabularies can be stored as text. Pure, thread-safe.
#pragma once

#include <array>
#include <string>

namespace websd {

// Entry b is the UTF-8 encoding of the code point that stands for byte b.
const std::array<std::string, 256>& clip_byte_to_unicode();

}  // namespace websd
