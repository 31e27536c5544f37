// Byte-level BPE as CLIP uses it: a word is the sequence of its UTF-8 bytes, each byte standing for the
// vocabulary symbol that clip_byte_to_unicode() gives it, with "</w>" appended to the last symbol; then
// the adjacent pair with the lowest merge rank is merged until no ranked pair remains (Hugging Face's
// BPE model with end_of_word_suffix "</w>"). Symbols missing from the vocabulary become the unk id.
// Merging works on ids with a priority queue, so a word of n bytes costs O(n log n), even for a
// 10 000-byte word.
// Ownership: owns its tables and a bounded cache of encoded words (kCacheCapacity words of at most
// kCacheMaxWordBytes bytes). Thread-safety: encode_word and clear_cache may be called concurrently
// (the cache is guarded by a mutex). Move-only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pipeline/tokenizer/tokenizer_types.h"

namespace websd {

using BpeVocab = std::unordered_map<std::string, TokenId>;
using BpeMerge = std::pair<std::string, std::string>;

class BpeModel {
 public:
  static constexpr std::size_t kCacheCapacity = 10000;
  static constexpr std::size_t kCacheMaxWordBytes = 256;

  // `merges` in rank order (a repeated pair keeps its last rank, as Hugging Face does). `unk_id` < 0
  // means none. Throws websd::Error naming `merges_origin` when a merge or its result is not in
  // `vocab`, or `vocab_origin` when a byte has no symbol in `vocab` and there is no unk token.
  BpeModel(const BpeVocab& vocab, const std::vector<BpeMerge>& merges, TokenId unk_id, const std::string& vocab_origin,
           const std::string& merges_origin);
  ~BpeModel();
  BpeModel(BpeModel&&) noexcept;
  BpeModel& operator=(BpeModel&&) noexcept;

  // Appends the ids of one pre-tokenized piece, given as its UTF-8 bytes.
  void encode_word(std::string_view word, std::vector<TokenId>& ids) const;

  void clear_cache() const;
  std::size_t cache_size() const;

 private:
  struct MergeRule {
    std::uint32_t rank;
    TokenId merged;
  };
  struct WordCache;

  const MergeRule* find_merge(TokenId left, TokenId right) const;
  void merge_word(std::string_view word, std::vector<TokenId>& ids) const;

  std::array<TokenId, 256> byte_ids_{};      // symbol of each byte inside a word
  std::array<TokenId, 256> byte_end_ids_{};  // symbol of each byte ending a word ("</w>" appended)
  std::unordered_map<std::uint64_t, MergeRule> merges_;
  std::unique_ptr<WordCache> cache_;
};

}  // namespace websd
