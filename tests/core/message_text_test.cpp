// message_safe: what an error message may echo of a file, a path or a prompt.
#include "core/message_text.h"

#include <gtest/gtest.h>

#include <string>

namespace websd {
namespace {

TEST(MessageSafe, KeepsPrintableAsciiAndValidUtf8) {
  EXPECT_EQ(message_safe("unet/config.json: key \"a\\b\" is 3"), "unet/config.json: key \"a\\b\" is 3");
  EXPECT_EQ(message_safe("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb1"),
            "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\xb1");
  EXPECT_EQ(message_safe(""), "");
}

TEST(MessageSafe, EscapesC0ControlsAndDel) {
  EXPECT_EQ(message_safe("red \x1b[31mtext\x1b[0m"), "red \\x1b[31mtext\\x1b[0m");
  EXPECT_EQ(message_safe("two\nlines\r\tand\x7f"), "two\\x0alines\\x0d\\x09and\\x7f");
  EXPECT_EQ(message_safe(std::string("nul\0byte", 8)), "nul\\x00byte");
}

TEST(MessageSafe, EscapesC1ControlsEncodedOrRaw) {
  // U+009B (CSI) as UTF-8 is C2 9B; a raw 0x9b byte is not UTF-8 but a terminal may still act on it.
  EXPECT_EQ(message_safe("a\xc2\x9b"
                         "31mb"),
            "a\\u009b31mb");
  EXPECT_EQ(message_safe("a\x9b"
                         "31mb"),
            "a\\x9b31mb");
  EXPECT_EQ(message_safe("\xc2\x80\xc2\x9f\xc2\xa0"), "\\u0080\\u009f\xc2\xa0");  // U+00A0 is printable
  EXPECT_EQ(message_safe("line\xe2\x80\xa8sep"), "line\\u2028sep");
}

TEST(MessageSafe, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(message_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(message_safe("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(message_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(message_safe("cut \xe6\x97"), "cut \\xe6\\x97");            // truncated sequence
  EXPECT_EQ(message_safe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST(MessageSafe, IsIdempotent) {
  const std::string once = message_safe("a\x1b\x9b\xc2\x85z", 100);
  EXPECT_EQ(message_safe(once, 100), once);
}

TEST(MessageSafe, CapsTheLengthAndNamesTheSize) {
  const std::string text(10'000'000, 'x');
  const std::string shown = message_safe(text, 80);
  EXPECT_EQ(shown, std::string(80, 'x') + "...(10000000 bytes)");
  EXPECT_EQ(message_safe("short", 80), "short");
  EXPECT_EQ(message_safe("exactly8", 8), "exactly8");
  EXPECT_EQ(message_safe("exactly9!", 8), "exactly9...(9 bytes)");
}

TEST(MessageSafe, NeverCutsInsideACharacterOrAnEscape) {
  EXPECT_EQ(message_safe("ab\xe6\x97\xa5", 4), "ab...(5 bytes)");
  EXPECT_EQ(message_safe("ab\x1b"
                         "cd",
                         4),
            "ab...(5 bytes)");
  EXPECT_EQ(message_safe("ab\x1b"
                         "cd",
                         6),
            "ab\\x1b...(5 bytes)");
}

TEST(MessageSafe, QuoteWrapsInSingleQuotes) {
  EXPECT_EQ(message_quote("conv_in.weight", 160), "'conv_in.weight'");
  EXPECT_EQ(message_quote("line\nbreak", 160), "'line\\x0abreak'");
  EXPECT_EQ(message_quote(std::string(200, 'n'), 160), "'" + std::string(160, 'n') + "...(200 bytes)'");
}

}  // namespace
}  // namespace websd
