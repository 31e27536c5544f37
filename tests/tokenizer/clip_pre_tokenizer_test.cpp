// The hand-written pre-tokenizer splits as CLIP's regex does.
#include "pipeline/tokenizer/clip_pre_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace websd {
namespace {

std::vector<std::u32string> pieces_of(std::u32string_view text) {
  std::vector<TextSpan> spans;
  clip_pre_tokenize(text, spans);
  std::vector<std::u32string> pieces;
  for (const TextSpan& span : spans) pieces.emplace_back(text.substr(span.begin, span.end - span.begin));
  return pieces;
}

using Pieces = std::vector<std::u32string>;

TEST(ClipPreTokenize, LettersRunAndDigitsStandAlone) {
  EXPECT_EQ(pieces_of(U"a cat 4k 1234"), (Pieces{U"a", U"cat", U"4", U"k", U"1", U"2", U"3", U"4"}));
  EXPECT_EQ(pieces_of(U"caf\u00e9 \u4e00\u53ea\u732b"), (Pieces{U"caf\u00e9", U"\u4e00\u53ea\u732b"}));
}

TEST(ClipPreTokenize, SymbolsRunUntilLetterDigitOrSpace) {
  EXPECT_EQ(pieces_of(U"hello, world!!! ???"), (Pieces{U"hello", U",", U"world", U"!!!", U"???"}));
  EXPECT_EQ(pieces_of(U"(masterpiece:1.2)"), (Pieces{U"(", U"masterpiece", U":", U"1", U".", U"2", U")"}));
}

TEST(ClipPreTokenize, ContractionsComeFirstAtTheirPosition) {
  EXPECT_EQ(pieces_of(U"don't we're i'll"), (Pieces{U"don", U"'t", U"we", U"'re", U"i", U"'ll"}));
  // A symbol run that reaches an apostrophe swallows it; ''s is '' then s.
  EXPECT_EQ(pieces_of(U"!'s ''s"), (Pieces{U"!'", U"s", U"''", U"s"}));
}

TEST(ClipPreTokenize, SpecialTokenSpellingsSplitInThreeButBoundTheirNeighbours) {
  // As Hugging Face's fast tokenizer splits them (see clip_pre_tokenizer.h).
  EXPECT_EQ(pieces_of(U"x<|endoftext|>'s"), (Pieces{U"x", U"<|", U"endoftext", U"|>", U"'s"}));
  EXPECT_EQ(pieces_of(U"!<|startoftext|>!"), (Pieces{U"!<|", U"startoftext", U"|>!"}));
  EXPECT_EQ(pieces_of(U"<|startoftext|!"), (Pieces{U"<|", U"startoftext", U"|!"}));
}

TEST(ClipPreTokenize, WhiteSpaceOnlyGivesNothing) {
  EXPECT_TRUE(pieces_of(U"").empty());
  EXPECT_TRUE(pieces_of(U" \u3000\t ").empty());
}

TEST(ClipPreTokenize, ControlCharactersAreSymbols) {
  EXPECT_EQ(pieces_of(std::u32string(U"a\0\u0001b\u001f", 5)),
            (Pieces{U"a", std::u32string(U"\0\u0001", 2), U"b", U"\u001f"}));
}

}  // namespace
}  // namespace websd
