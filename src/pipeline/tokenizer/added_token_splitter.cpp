#include "pipeline/tokenizer/added_token_splitter.h"

#include "pipeline/tokenizer/clip_normalizer.h"

namespace websd {
namespace {

template <class Char>
void split_leftmost_longest(std::basic_string_view<Char> text,
                            const std::vector<std::pair<std::basic_string<Char>, TokenId>>& tokens,
                            std::vector<TextSegment>& segments) {
  std::size_t text_begin = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t best_length = 0;
    TokenId best_id = -1;
    for (const auto& [content, id] : tokens) {
      if (content.size() > best_length && text.substr(pos, content.size()) == content) {
        best_length = content.size();
        best_id = id;
      }
    }
    if (best_length == 0) {
      ++pos;
      continue;
    }
    if (text_begin < pos) segments.push_back({text_begin, pos, -1});
    segments.push_back({pos, pos + best_length, best_id});
    pos += best_length;
    text_begin = pos;
  }
  if (text_begin < text.size()) segments.push_back({text_begin, text.size(), -1});
}

}  // namespace

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken>& tokens) {
  for (const AddedToken& token : tokens) {
    if (!token.normalized) {
      if (!token.content.empty()) raw_tokens_.emplace_back(token.content, token.id);
      continue;
    }
    std::u32string normalized = clip_normalize(token.content);
    if (!normalized.empty()) normalized_tokens_.emplace_back(std::move(normalized), token.id);
  }
}

void AddedTokenSplitter::split_raw(std::string_view text, std::vector<TextSegment>& segments) const {
  split_leftmost_longest(text, raw_tokens_, segments);
}

void AddedTokenSplitter::split_normalized(std::u32string_view text, std::vector<TextSegment>& segments) const {
  split_leftmost_longest(text, normalized_tokens_, segments);
}

}  // namespace websd
