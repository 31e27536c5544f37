#include "pipeline/tokenizer/bpe_model.h"

#include <functional>
#include <mutex>
#include <queue>

#include "core/error.h"
#include "core/message_text.h"
#include "pipeline/tokenizer/clip_byte_unicode.h"

namespace websd {
namespace {

constexpr std::string_view kEndOfWord = "</w>";

std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

TokenId vocab_id(const BpeVocab& vocab, const std::string& symbol) {
  const auto found = vocab.find(symbol);
  return found == vocab.end() ? -1 : found->second;
}

// A symbol of the word being merged; merged symbols keep the left index and unlink the right one.
struct Symbol {
  TokenId id;
  int prev;
  int next;
  bool alive;
};

// A possible merge of symbol `left` with its right neighbour, valid while both still hold the ids seen
// when it was queued (a symbol's id only ever grows into a longer token, so a stale entry never matches).
struct Candidate {
  std::uint32_t rank;
  int left;
  TokenId left_id;
  TokenId right_id;
  TokenId merged;

  bool operator>(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : left > other.left;  // lowest rank, then leftmost
  }
};

}  // namespace

struct BpeModel::WordCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<TokenId>> words;
};

BpeModel::BpeModel(const BpeVocab& vocab, const std::vector<BpeMerge>& merges, TokenId unk_id,
                   const std::string& vocab_origin, const std::string& merges_origin)
    : cache_(std::make_unique<WordCache>()) {
  const auto& byte_symbols = clip_byte_to_unicode();
  for (std::size_t byte = 0; byte < 256; ++byte) {
    byte_ids_[byte] = vocab_id(vocab, byte_symbols[byte]);
    byte_end_ids_[byte] = vocab_id(vocab, byte_symbols[byte] + std::string(kEndOfWord));
    for (const TokenId id : {byte_ids_[byte], byte_end_ids_[byte]}) {
      if (id < 0 && unk_id < 0) {
        throw Error("tokenizer", vocab_origin + ": the vocabulary has no symbol for byte " + std::to_string(byte) +
                                     " and no unk token is configured (is this a byte-level CLIP vocabulary?)");
      }
    }
    if (byte_ids_[byte] < 0) byte_ids_[byte] = unk_id;
    if (byte_end_ids_[byte] < 0) byte_end_ids_[byte] = unk_id;
  }
  merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const TokenId left_id = vocab_id(vocab, left);
    const TokenId right_id = vocab_id(vocab, right);
    const TokenId merged_id = vocab_id(vocab, left + right);
    if (left_id < 0 || right_id < 0 || merged_id < 0) {
      const std::string& missing = left_id < 0 ? left : right_id < 0 ? right : left + right;
      throw Error("tokenizer", merges_origin + ": merge " + std::to_string(rank + 1) + " " +
                                   message_quote(left + " " + right, 80) + " uses " + message_quote(missing, 80) +
                                   ", which is not in the vocabulary (the vocab and merges do not belong together)");
    }
    merges_[pair_key(left_id, right_id)] = MergeRule{static_cast<std::uint32_t>(rank), merged_id};
  }
}

BpeModel::~BpeModel() = default;
BpeModel::BpeModel(BpeModel&&) noexcept = default;
BpeModel& BpeModel::operator=(BpeModel&&) noexcept = default;

const BpeModel::MergeRule* BpeModel::find_merge(TokenId left, TokenId right) const {
  const auto found = merges_.find(pair_key(left, right));
  return found == merges_.end() ? nullptr : &found->second;
}

void BpeModel::merge_word(std::string_view word, std::vector<TokenId>& ids) const {
  const int count = static_cast<int>(word.size());
  std::vector<Symbol> symbols(word.size());
  for (int i = 0; i < count; ++i) {
    const auto byte = static_cast<unsigned char>(word[i]);
    symbols[i] =
        Symbol{i + 1 == count ? byte_end_ids_[byte] : byte_ids_[byte], i - 1, i + 1 < count ? i + 1 : -1, true};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto push_candidate = [&](int left) {
    if (left < 0 || symbols[left].next < 0) return;
    const TokenId left_id = symbols[left].id;
    const TokenId right_id = symbols[symbols[left].next].id;
    if (const MergeRule* rule = find_merge(left_id, right_id)) {
      queue.push(Candidate{rule->rank, left, left_id, right_id, rule->merged});
    }
  };
  for (int i = 0; i + 1 < count; ++i) push_candidate(i);
  while (!queue.empty()) {
    const Candidate candidate = queue.top();
    queue.pop();
    Symbol& left = symbols[candidate.left];
    if (!left.alive || left.id != candidate.left_id || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    if (right.id != candidate.right_id) continue;
    left.id = candidate.merged;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = candidate.left;
    push_candidate(left.prev);
    push_candidate(candidate.left);
  }
  for (int i = 0; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);  // `word` is never empty
}

void BpeModel::encode_word(std::string_view word, std::vector<TokenId>& ids) const {
  if (word.empty()) return;
  const bool cacheable = word.size() <= kCacheMaxWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    const auto found = cache_->words.find(std::string(word));
    if (found != cache_->words.end()) {
      ids.insert(ids.end(), found->second.begin(), found->second.end());
      return;
    }
  }
  const std::size_t first = ids.size();
  merge_word(word, ids);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->words.size() < kCacheCapacity) {
      cache_->words.emplace(std::string(word), std::vector<TokenId>(ids.begin() + first, ids.end()));
    }
  }
}

void BpeModel::clear_cache() const {
  std::lock_guard<std::mutex> lock(cache_->mutex);
  cache_->words.clear();
}

std::size_t BpeModel::cache_size() const {
  std::lock_guard<std::mutex> lock(cache_->mutex);
  return cache_->words.size();
}

}  // namespace websd
