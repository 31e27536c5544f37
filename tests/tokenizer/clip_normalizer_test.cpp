// The normaliser: NFC, White_Space runs to one space, lower case as Rust's char::to_lowercase.
#include "pipeline/tokenizer/clip_normalizer.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace websd {
namespace {

TEST(ClipNormalize, ComposesToNfc) {
  EXPECT_EQ(clip_normalize("cafe\xCC\x81"), U"caf\u00e9");           // e + combining acute
  EXPECT_EQ(clip_normalize("\xE1\x84\x80\xE1\x85\xA1"), U"\uac00");  // Hangul jamo compose
}

TEST(ClipNormalize, CollapsesEveryWhiteSpaceRun) {
  EXPECT_EQ(clip_normalize("a \t\n\r\x0B\x0C"
                           "b\xC2\xA0\xE3\x80\x80"
                           "c\xC2\x85"),
            U"a b c ");
  // U+200B is not White_Space and U+001F is not either (unlike Python's str.isspace).
  EXPECT_EQ(clip_normalize("a\xE2\x80\x8B"
                           "b\x1F"),
            U"a\u200bb\u001f");
}

TEST(ClipNormalize, LowerCasesPerCodePoint) {
  EXPECT_EQ(clip_normalize("ABC \xC3\x89"), U"abc \u00e9");
  EXPECT_EQ(clip_normalize("\xC4\xB0"), U"i\u0307");               // İ has a two-code-point lower case
  EXPECT_EQ(clip_normalize("\xCE\xA3\xCE\xA3"), U"\u03c3\u03c3");  // no final-sigma rule
  EXPECT_EQ(clip_normalize("\xC7\x85"), U"\u01c6");                // title case ǅ
}

TEST(ClipNormalize, KeepsEmbeddedNul) { EXPECT_EQ(clip_normalize(std::string("A\0B", 3)), std::u32string(U"a\0b", 3)); }

TEST(ClipNormalize, RejectsIllFormedInputWithAnError) { EXPECT_THROW(clip_normalize("\xFF"), Error); }

}  // namespace
}  // namespace websd
