// CLIP's pre-tokenizer: splits normalised text into the pieces that BPE encodes one by one, as Hugging
// Face's fast CLIPTokenizer does, implemented by hand over code points (no regex library, so the same
// code builds for WebAssembly). tokenizer.json splits with
//   <\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+
// (alternatives tried in that order at each position, White_Space between matches dropped), then its
// ByteLevel step splits every piece again with GPT-2's regex. That second split changes only the
// special-token spellings: "<|endoftext|>" becomes "<|", "endoftext", "|>". So a spelling that reached
// normalisation (e.g. "<|ENDOFTEXT|>"; typed special tokens are split out before, see
// added_token_splitter.h) is no special token, but it still bounds its neighbours: in
// "<|endoftext|>'s" the "|>" does not swallow the "'" of "'s".
// Pure function, thread-safe.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace websd {

// A half-open range [begin, end) of code-point offsets.
struct TextSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Appends the pieces of `text` to `pieces` (left to right).
void clip_pre_tokenize(std::u32string_view text, std::vector<TextSpan>& pieces);

}  // namespace websd
