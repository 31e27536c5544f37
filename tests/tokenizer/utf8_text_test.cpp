// utf8_replace_invalid against the results of Python's bytes.decode("utf-8", errors="replace").
#include "pipeline/tokenizer/utf8_text.h"

#include <gtest/gtest.h>

namespace websd {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string replacements(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += kFffd;
  return out;
}

TEST(Utf8ReplaceInvalid, KeepsWellFormedText) {
  const std::string text = "caf\xC3\xA9 \xE4\xB8\x80 \xF0\x9F\x98\x80 plain";
  EXPECT_EQ(utf8_replace_invalid(text), text);
  EXPECT_EQ(utf8_replace_invalid(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(Utf8ReplaceInvalid, ReplacesMaximalSubpartsAsPythonDoes) {
  EXPECT_EQ(utf8_replace_invalid("\xC3"), replacements(1));  // truncated 2-byte form
  EXPECT_EQ(utf8_replace_invalid("\xE1\x80"
                                 "A"),
            replacements(1) + "A");                                      // truncated 3-byte form
  EXPECT_EQ(utf8_replace_invalid("\xF0\x9F\x98"), replacements(1));      // truncated 4-byte form
  EXPECT_EQ(utf8_replace_invalid("\xED\xA0\x80"), replacements(3));      // a surrogate
  EXPECT_EQ(utf8_replace_invalid("\xF4\x90\x80\x80"), replacements(4));  // above U+10FFFF
  EXPECT_EQ(utf8_replace_invalid("\xC0\xAF"), replacements(2));          // overlong
  EXPECT_EQ(utf8_replace_invalid("\xE0\x80\xAF"), replacements(3));      // overlong
  EXPECT_EQ(utf8_replace_invalid("a\x80\xBF"
                                 "b"),
            std::string("a").append(replacements(2)).append("b"));  // stray continuations
  EXPECT_EQ(utf8_replace_invalid("\xFF\xFE"), replacements(2));
  EXPECT_EQ(utf8_replace_invalid("\xF8\x88\x80\x80\x80"), replacements(5));  // old 5-byte form
}

TEST(Utf8Append, EncodesEveryLength) {
  std::string out;
  for (const char32_t c : {U'a', U'\u00e9', U'\u4e00', U'\U0001F600'}) utf8_append(out, c);
  EXPECT_EQ(out, "a\xC3\xA9\xE4\xB8\x80\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace websd
