// Plain value types shared by the pieces of the CLIP tokenizer. No behaviour, no state.
#pragma once

#include <cstdint>
#include <string>

namespace websd {

// CLIP vocabularies hold 49408 entries; 32 bits is what the text encoder's embedding takes.
using TokenId = std::int32_t;

// A token matched as a whole before BPE runs (the special tokens, and tokens a user added, e.g. by
// textual inversion), as in Hugging Face's `added_tokens` / `added_tokens_decoder`.
struct AddedToken {
  std::string content;
  TokenId id = 0;
  bool special = true;
  // false: matched in the raw prompt; true: matched after the prompt was normalised (NFC, lower case).
  bool normalized = false;
};

}  // namespace websd
