// Finds added tokens (special tokens such as <|startoftext|>, <|endoftext|> and, for SD 2.x, the pad
// token "!") inside a prompt so that they become their own ids instead of going through BPE. Matching
// is leftmost-longest and non-overlapping, as in Hugging Face's AddedVocabulary. Tokens with
// normalized=false are found in the raw prompt; tokens with normalized=true are found in the normalised
// text, against their normalised spelling.
// Ownership: copies the token list. Thread-safety: immutable after construction.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/tokenizer/tokenizer_types.h"

namespace websd {

// A half-open range [begin, end) of the searched text (bytes or code points): either plain text
// (`token` < 0) or an added token with that id.
struct TextSegment {
  std::size_t begin = 0;
  std::size_t end = 0;
  TokenId token = -1;

  bool is_token() const { return token >= 0; }
};

class AddedTokenSplitter {
 public:
  explicit AddedTokenSplitter(const std::vector<AddedToken>& tokens);

  // Appends segments covering all of `text` (UTF-8 bytes, well-formed) in order.
  void split_raw(std::string_view text, std::vector<TextSegment>& segments) const;
  // Appends segments covering all of `text` (normalised code points) in order.
  void split_normalized(std::u32string_view text, std::vector<TextSegment>& segments) const;

 private:
  std::vector<std::pair<std::string, TokenId>> raw_tokens_;
  std::vector<std::pair<std::u32string, TokenId>> normalized_tokens_;
};

}  // namespace websd
