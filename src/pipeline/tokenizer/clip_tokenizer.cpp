#include "pipeline/tokenizer/clip_tokenizer.h"

#include <utility>

#include "core/error.h"
#include "core/message_text.h"
#include "pipeline/tokenizer/clip_normalizer.h"
#include "pipeline/tokenizer/clip_pre_tokenizer.h"
#include "pipeline/tokenizer/utf8_text.h"

namespace websd {
namespace {

TokenId resolve_special(const ClipTokenizerSpec& spec, const SpecialTokenSetting& setting, const char* role) {
  for (const AddedToken& token : spec.added_tokens) {
    if (token.content == setting.content) return token.id;
  }
  const auto found = spec.vocab.find(setting.content);
  if (found != spec.vocab.end()) return found->second;
  throw Error("tokenizer", setting.origin + ": " + role + " " + message_quote(setting.content, 80) +
                               " is not in the vocabulary of " + spec.origin +
                               " (use a token of that vocabulary, e.g. <|endoftext|>)");
}

int checked_max_length(const ClipTokenizerSpec& spec) {
  if (spec.max_length < 2) {
    throw Error("tokenizer", spec.origin + ": max_length " + std::to_string(spec.max_length) +
                                 " leaves no room for BOS and EOS (CLIP uses 77)");
  }
  return spec.max_length;
}

// The configured special tokens are added tokens too (Hugging Face registers them on load), so typing
// one in a prompt yields its id; that is why "!" is id 0 for SD 2.x, whose pad token it is.
std::vector<AddedToken> all_added_tokens(const ClipTokenizerSpec& spec) {
  std::vector<AddedToken> tokens = spec.added_tokens;
  const std::pair<const SpecialTokenSetting*, const char*> settings[] = {
      {&spec.bos, "bos_token"}, {&spec.eos, "eos_token"}, {&spec.unk, "unk_token"}, {&spec.pad, "pad_token"}};
  for (const auto& [setting, role] : settings) {
    bool known = false;
    for (const AddedToken& token : tokens) known = known || token.content == setting->content;
    if (!known) tokens.push_back(AddedToken{setting->content, resolve_special(spec, *setting, role), true, false});
  }
  return tokens;
}

}  // namespace

ClipTokenizer::ClipTokenizer(const ClipTokenizerSpec& spec)
    : bos_id_(resolve_special(spec, spec.bos, "bos_token")),
      eos_id_(resolve_special(spec, spec.eos, "eos_token")),
      pad_id_(resolve_special(spec, spec.pad, "pad_token")),
      max_length_(checked_max_length(spec)),
      added_tokens_(all_added_tokens(spec)),
      bpe_(spec.vocab, spec.merges, resolve_special(spec, spec.unk, "unk_token"), spec.origin, spec.merges_origin) {}

std::vector<TokenId> ClipTokenizer::encode(std::string_view prompt) const {
  std::vector<TokenId> ids;
  ids.reserve(static_cast<std::size_t>(max_length_));
  ids.push_back(bos_id_);
  append_content_ids(prompt, ids);
  const auto before_eos = static_cast<std::size_t>(max_length_ - 1);
  if (ids.size() > before_eos) ids.resize(before_eos);
  ids.push_back(eos_id_);
  ids.resize(static_cast<std::size_t>(max_length_), pad_id_);
  return ids;
}

std::vector<TokenId> ClipTokenizer::encode_unpadded(std::string_view prompt) const {
  std::vector<TokenId> ids{bos_id_};
  append_content_ids(prompt, ids);
  ids.push_back(eos_id_);
  return ids;
}

void ClipTokenizer::append_content_ids(std::string_view prompt, std::vector<TokenId>& ids) const {
  const std::string text = utf8_replace_invalid(prompt);
  std::vector<TextSegment> segments;
  added_tokens_.split_raw(text, segments);
  for (const TextSegment& segment : segments) {
    if (segment.is_token()) {
      ids.push_back(segment.token);
    } else {
      append_segment_ids(std::string_view(text).substr(segment.begin, segment.end - segment.begin), ids);
    }
  }
}

void ClipTokenizer::append_segment_ids(std::string_view raw_segment, std::vector<TokenId>& ids) const {
  const std::u32string normalized = clip_normalize(raw_segment);
  std::vector<TextSegment> parts;
  added_tokens_.split_normalized(normalized, parts);
  std::vector<TextSpan> pieces;
  std::string word;
  for (const TextSegment& part : parts) {
    if (part.is_token()) {
      ids.push_back(part.token);
      continue;
    }
    const std::u32string_view text = std::u32string_view(normalized).substr(part.begin, part.end - part.begin);
    pieces.clear();
    clip_pre_tokenize(text, pieces);
    for (const TextSpan& piece : pieces) {
      word.clear();
      for (std::size_t i = piece.begin; i < piece.end; ++i) utf8_append(word, text[i]);
      bpe_.encode_word(word, ids);
    }
  }
}

}  // namespace websd
