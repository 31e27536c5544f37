// BPE on a small hand-made vocabulary, where the expected merges can be worked out by hand.
#include "pipeline/tokenizer/bpe_model.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace websd {
namespace {

constexpr TokenId kUnk = 0;

BpeVocab tiny_vocab() {
  return {{"<unk>", kUnk}, {"a", 1},  {"b", 2},      {"c", 3},       {"a</w>", 4}, {"b</w>", 5},
          {"c</w>", 6},    {"ab", 7}, {"bc</w>", 8}, {"abc</w>", 9}, {"aa", 10},   {"aaaa", 11}};
}

std::vector<TokenId> encode(const BpeModel& model, std::string_view word) {
  std::vector<TokenId> ids;
  model.encode_word(word, ids);
  return ids;
}

TEST(BpeModel, MergesLowestRankFirst) {
  // "bc</w>" (rank 0) wins over "ab" (rank 1), and "a" + "bc</w>" has no merge.
  const BpeModel model(tiny_vocab(), {{"b", "c</w>"}, {"a", "b"}}, kUnk, "vocab", "merges");
  EXPECT_EQ(encode(model, "abc"), (std::vector<TokenId>{1, 8}));
  EXPECT_EQ(encode(model, "ab"), (std::vector<TokenId>{1, 5}));  // the last symbol is "b</w>": no "ab" merge
  EXPECT_EQ(encode(model, "abb"), (std::vector<TokenId>{7, 5}));
}

TEST(BpeModel, EqualRanksMergeLeftmostFirst) {
  const BpeModel model(tiny_vocab(), {{"a", "a"}, {"aa", "aa"}}, kUnk, "vocab", "merges");
  EXPECT_EQ(encode(model, "aaab"), (std::vector<TokenId>{10, 1, 5}));
  EXPECT_EQ(encode(model, "aaaaab"), (std::vector<TokenId>{11, 1, 5}));
}

TEST(BpeModel, UnknownBytesBecomeUnk) {
  const BpeModel model(tiny_vocab(), {{"a", "b"}}, kUnk, "vocab", "merges");
  EXPECT_EQ(encode(model, "xabb"), (std::vector<TokenId>{kUnk, 7, 5}));
  EXPECT_EQ(encode(model, "ax"), (std::vector<TokenId>{1, kUnk}));
}

TEST(BpeModel, CachesWordsAndForgetsThemOnClear) {
  const BpeModel model(tiny_vocab(), {{"a", "b"}}, kUnk, "vocab", "merges");
  const std::vector<TokenId> first = encode(model, "abab");
  EXPECT_EQ(model.cache_size(), 1u);
  EXPECT_EQ(encode(model, "abab"), first);
  model.clear_cache();
  EXPECT_EQ(model.cache_size(), 0u);
  EXPECT_EQ(encode(model, "abab"), first);
  EXPECT_EQ(encode(model, std::string(BpeModel::kCacheMaxWordBytes + 1, 'a')).size(), BpeModel::kCacheMaxWordBytes + 1);
  EXPECT_EQ(model.cache_size(), 1u);  // words longer than the limit are not kept
}

TEST(BpeModel, RejectsMergeOutsideTheVocabulary) {
  try {
    const BpeModel model(tiny_vocab(), {{"a", "c"}}, kUnk, "vocab.json", "merges.txt");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("merges.txt: merge 1 'a c' uses 'ac'"), std::string::npos) << error.what();
  }
}

TEST(BpeModel, RejectsMissingByteSymbolsWithoutUnk) {
  try {
    const BpeModel model(tiny_vocab(), {}, -1, "vocab.json", "merges.txt");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("vocab.json: the vocabulary has no symbol for byte 0"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace websd
