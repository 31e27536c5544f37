// websd's own Unicode tables and NFC (pipeline/tokenizer/unicode) against utf8proc, which they are
// generated from: every code point's letter/number class, lower case, combining class and NFC, and
// NFC of random sequences built from the characters that decompose, compose or reorder.
#include "pipeline/tokenizer/unicode/unicode_normalization.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <random>
#include <string>
#include <vector>

#include "pipeline/tokenizer/utf8_text.h"

namespace websd {
namespace {

bool scalar_value(char32_t c) { return c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF); }

// NFC as the tokenizer computed it before it had its own tables: utf8proc_decompose (which also
// puts combining marks in canonical order) then utf8proc_normalize_utf32 (composition).
std::u32string utf8proc_nfc(const std::u32string& text) {
  std::string bytes;
  for (const char32_t c : text) utf8_append(bytes, c);
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
  std::vector<utf8proc_int32_t> buffer(text.size() * 4 + 8);
  const utf8proc_ssize_t count = utf8proc_decompose(reinterpret_cast<const utf8proc_uint8_t*>(bytes.data()),
                                                    static_cast<utf8proc_ssize_t>(bytes.size()), buffer.data(),
                                                    static_cast<utf8proc_ssize_t>(buffer.size()), options);
  EXPECT_GE(count, 0);
  EXPECT_LE(count, static_cast<utf8proc_ssize_t>(buffer.size()));
  const utf8proc_ssize_t composed = utf8proc_normalize_utf32(buffer.data(), count, options);
  return std::u32string(buffer.begin(), buffer.begin() + composed);
}

bool utf8proc_letter(char32_t c) {
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO;
}

bool utf8proc_number(char32_t c) {
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category >= UTF8PROC_CATEGORY_ND && category <= UTF8PROC_CATEGORY_NO;
}

TEST(UnicodeTables, EveryCodePointAgreesWithUtf8proc) {
  std::size_t mismatches = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (!scalar_value(c)) continue;
    const auto code = static_cast<utf8proc_int32_t>(c);
    const bool same = unicode_is_letter(c) == utf8proc_letter(c) && unicode_is_number(c) == utf8proc_number(c) &&
                      unicode_to_lower(c) == static_cast<char32_t>(utf8proc_tolower(code)) &&
                      unicode_combining_class(c) == utf8proc_get_property(code)->combining_class &&
                      unicode_nfc(std::u32string(1, c)) == utf8proc_nfc(std::u32string(1, c));
    if (!same && ++mismatches <= 10) ADD_FAILURE() << "U+" << std::hex << static_cast<std::uint32_t>(c);
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(UnicodeTables, NfcOfRandomSequencesAgreesWithUtf8proc) {
  // Characters that take part in normalisation: those that decompose, have a combining class, or
  // are the first or second half of a composition; plus Hangul jamo and syllables and plain letters.
  std::vector<char32_t> interesting = {U'a', U'e', U'o', U' ', 0x1100, 0x1161, 0x11A8, 0xAC00, 0xAC01};
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (!scalar_value(c)) continue;
    const std::u32string one(1, c);
    if (unicode_combining_class(c) != 0 || unicode_nfc(one) != one) interesting.push_back(c);
  }
  ASSERT_GT(interesting.size(), 1000u);
  std::mt19937 random(20261203);
  std::uniform_int_distribution<std::size_t> pick(0, interesting.size() - 1);
  std::uniform_int_distribution<int> length(1, 8);
  for (int trial = 0; trial < 200000; ++trial) {
    std::u32string text;
    for (int i = length(random); i > 0; --i) text.push_back(interesting[pick(random)]);
    // A decomposed form too, so that compositions across combining marks are exercised.
    for (const std::u32string& form : {text, utf8proc_nfc(text) + text}) {
      ASSERT_EQ(unicode_nfc(form), utf8proc_nfc(form)) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace websd
