// Prompts outside the fixtures: empty, 10 000 characters, ill-formed UTF-8, emoji, CJK, control
// characters, casing and normalisation corner cases, special tokens typed by a user. The expected ids
// were produced by Hugging Face tokenizers 0.23 (the Rust library behind transformers' CLIPTokenizer,
// run through its Node binding) on the fixtures' tokenizer.json files; for ill-formed UTF-8 it was
// given the text Python's bytes.decode("utf-8", errors="replace") makes of those bytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/tokenizer/clip_tokenizer_loader.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

using Ids = std::vector<TokenId>;

struct OracleCase {
  const char* name;
  std::string prompt;
  Ids sd1;  // unpadded ids
  Ids sd2;
};

const std::vector<OracleCase>& oracle_cases() {
  static const std::vector<OracleCase> cases = {
      {"empty", "", {49406, 49407}, {49406, 49407}},
      {"whitespace_only", " \x09\x0A\xE3\x80\x80 ", {49406, 49407}, {49406, 49407}},
      {"invalid_utf8",
       "caf\xC3 \xFF\xFE ok \xED\xA0\x80 \xE1\x80"
       "A \xF0\x9F\x98",
       {49406, 20867, 39802, 47356, 39802, 2481, 47356, 47356, 39802, 39802, 320, 39802, 49407},
       {49406, 20867, 39802, 47356, 39802, 2481, 47356, 47356, 39802, 39802, 320, 39802, 49407}},
      {"emoji",
       "a \xF0\x9F\x90\xB1 with \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 family "
       "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7 flag \xF0\x9F\x99\x82\xF0\x9F\x99\x82",
       {49406, 320, 22979, 593, 26304, 26304, 964, 356, 1315, 16223, 4859, 32006, 14860, 49407},
       {49406, 320, 22979, 593, 26304, 26304, 964, 356, 1315, 16223, 4859, 32006, 14860, 49407}},
      {"cjk",
       "\xE4\xB8\x80\xE5\x8F\xAA\xE7\x8C\xAB\xE5\x9D\x90\xE5\x9C\xA8\xE7\xBA\xA2\xE8\x89\xB2\xE7\x9A\x84\xE6\xB2\x99"
       "\xE5\x8F\x91\xE4\xB8\x8A, "
       "\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x82\xBF\xE3\x83\xAF\xE3\x83\xBC\xE3\x81\xAE\xE5\xA4\x9C\xE6\x99\xAF "
       "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xEB\xAC\xB8\xEC\x9E\xA5",
       {49406, 19759, 222,   34517, 103,   163,   234,  104, 161,   251,   238,   37746, 101,   163,
        118,   95,    164,   231,   110,   163,   248,  226, 162,   110,   247,   34517, 239,   19759,
        488,   267,   48338, 21078, 105,   34941, 2429, 107, 13457, 21575, 23170, 250,   48132, 363,
        15197, 250,   31871, 255,   31625, 368,   167,  105, 116,   20849, 354,   49407},
       {49406, 19759, 222,   34517, 103,   163,   234,  104, 161,   251,   238,   37746, 101,   163,
        118,   95,    164,   231,   110,   163,   248,  226, 162,   110,   247,   34517, 239,   19759,
        488,   267,   48338, 21078, 105,   34941, 2429, 107, 13457, 21575, 23170, 250,   48132, 363,
        15197, 250,   31871, 255,   31625, 368,   167,  105, 116,   20849, 354,   49407}},
      {"control",
       std::string("tab\x09here\x01\x1F\x7F\xC2\x85next\xC2\xA0nbsp\xE3\x80\x80ideographic\xE2\x80\x8Bzwsp\x00nul", 48),
       {49406, 14724, 763, 189, 219, 477, 1131, 6459, 4393, 1909, 78, 4245, 9844, 89, 86, 4393, 444, 1156, 331, 49407},
       {49406, 14724, 763, 189, 219, 477, 1131, 6459, 4393, 1909, 78, 4245, 9844, 89, 86, 4393, 444, 1156, 331, 49407}},
      {"casing",
       "\xC4\xB0stanbul \xCE\xA3\xCE\x8A\xCE\xA3\xCE\xA5\xCE\xA6\xCE\x9F\xCE\xA3 Stra\xC3\x9F"
       "e \xC7\x85 \xE1\xBA\x9E",
       {49406, 328, 16384, 11231, 139,  225, 138, 107, 139, 225, 139, 227, 139,  228,
        138,   123, 139,   481,   1894, 127, 253, 324, 131, 484, 127, 509, 49407},
       {49406, 328, 16384, 11231, 139,  225, 138, 107, 139, 225, 139, 227, 139,  228,
        138,   123, 139,   481,   1894, 127, 253, 324, 131, 484, 127, 509, 49407}},
      {"nfc",
       "cafe\xCC\x81 and caf\xC3\xA9 and \xE1\x84\x80\xE1\x85\xA1",
       {49406, 15304, 537, 15304, 537, 21122, 478, 49407},
       {49406, 15304, 537, 15304, 537, 21122, 478, 49407}},
      {"special_adjacent",
       "a<|endoftext|>b <|ENDOFTEXT|> <|startoftext|><|endoftext|> <|endoftext|",
       {49406, 320, 49407, 321, 27, 347, 40786, 4160, 91, 285, 49406, 49407, 27, 347, 40786, 4160, 347, 49407},
       {49406, 320, 49407, 321, 27, 347, 40786, 4160, 91, 285, 49406, 49407, 27, 347, 40786, 4160, 347, 49407}},
      {"special_spellings_bound_neighbours",
       "x<|ENDOFTEXT|>'s !<|STARTOFTEXT|>! hi!<|endoftext|>!",
       {49406, 343,  27,   347, 40786, 4160, 91,   285, 568,   0,   27,   347,
        993,   6659, 4160, 91,  29,    256,  1883, 256, 49407, 256, 49407},
       {49406, 343,  27,   347, 40786, 4160, 91,   285, 568,   0, 27,   347,
        993,   6659, 4160, 91,  285,   0,    1883, 0,   49407, 0, 49407}},
      {"contractions",
       "'S 'LL she'd ''s 'tis we're you've i'm",
       {49406, 568, 1342, 1043, 1896, 8445, 338, 713, 533, 649, 982, 592, 1200, 328, 880, 49407},
       {49406, 568, 1342, 1043, 1896, 8445, 338, 713, 533, 649, 982, 592, 1200, 328, 880, 49407}},
      {"bangs", "hi!?! !!", {49406, 1883, 29767, 748, 49407}, {49406, 1883, 0, 286, 0, 0, 0, 49407}},
      {"numbers_other_scripts",
       "\xD9\xA3\xD9\xA4 \xE2\x85\xA7 \xC2\xBD x\xC2\xB2",
       {49406, 149, 352, 149, 353, 158, 227, 371, 33613, 343, 41175, 49407},
       {49406, 149, 352, 149, 353, 158, 227, 371, 33613, 343, 41175, 49407}},
  };
  return cases;
}

std::string repeated_to(const std::string& unit, std::size_t length) {
  std::string text;
  while (text.size() < length) text += unit;
  text.resize(length);
  return text;
}

class ClipTokenizerRobustness : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sd1_ = new ClipTokenizer(load_clip_tokenizer(fixture_path("clip-tokenizer")));
    sd2_ = new ClipTokenizer(load_clip_tokenizer(fixture_path("clip-tokenizer-sd2")));
  }
  static void TearDownTestSuite() {
    delete sd1_;
    delete sd2_;
  }

  // The padded form must be the unpadded one cut to 76 ids, then EOS, then pad ids.
  static void expect_padded_consistent(const ClipTokenizer& tokenizer, const std::string& prompt) {
    Ids expected = tokenizer.encode_unpadded(prompt);
    if (expected.size() > 77) {
      expected.resize(76);
      expected.push_back(tokenizer.eos_id());
    }
    expected.resize(77, tokenizer.pad_id());
    EXPECT_EQ(tokenizer.encode(prompt), expected);
  }

  static ClipTokenizer* sd1_;
  static ClipTokenizer* sd2_;
};

ClipTokenizer* ClipTokenizerRobustness::sd1_ = nullptr;
ClipTokenizer* ClipTokenizerRobustness::sd2_ = nullptr;

TEST_F(ClipTokenizerRobustness, MatchesHuggingFaceOnHardPrompts) {
  for (const OracleCase& oracle : oracle_cases()) {
    EXPECT_EQ(sd1_->encode_unpadded(oracle.prompt), oracle.sd1) << oracle.name;
    EXPECT_EQ(sd2_->encode_unpadded(oracle.prompt), oracle.sd2) << oracle.name;
    expect_padded_consistent(*sd1_, oracle.prompt);
    expect_padded_consistent(*sd2_, oracle.prompt);
  }
}

TEST_F(ClipTokenizerRobustness, EmptyPromptIsBosEosThenPadding) {
  Ids sd1(77, 49407);
  sd1[0] = 49406;
  EXPECT_EQ(sd1_->encode(""), sd1);
  Ids sd2(77, 0);
  sd2[0] = 49406;
  sd2[1] = 49407;
  EXPECT_EQ(sd2_->encode(""), sd2);
}

TEST_F(ClipTokenizerRobustness, TenThousandCharacterPromptTruncatesKeepingBosAndEos) {
  const std::string prompt = repeated_to("a photo of an astronaut riding a horse on mars, ", 10000);
  const Ids phrase = {320, 1125, 539, 550, 18376, 6765, 320, 4558, 525, 7496, 267};
  const Ids unpadded = sd1_->encode_unpadded(prompt);
  ASSERT_EQ(unpadded.size(), 2295u);
  const Ids tail(unpadded.end() - 8, unpadded.end());
  EXPECT_EQ(tail, (Ids{7496, 267, 320, 1125, 539, 550, 601, 49407}));
  const Ids padded = sd1_->encode(prompt);
  ASSERT_EQ(padded.size(), 77u);
  EXPECT_EQ(padded.front(), 49406);
  EXPECT_EQ(padded.back(), 49407);
  for (std::size_t i = 1; i < 76; ++i) EXPECT_EQ(padded[i], phrase[(i - 1) % phrase.size()]) << i;
  expect_padded_consistent(*sd2_, prompt);
}

TEST_F(ClipTokenizerRobustness, TenThousandLetterWordIsMergedLikeHuggingFace) {
  const std::string prompt = repeated_to("abcdefghijklmnopqrstuvwxyz", 10000);
  const Ids period = {13137, 2044, 583, 7337, 74, 6981, 578, 79, 80, 81, 858, 85, 18192, 37579};
  const Ids ids = sd1_->encode_unpadded(prompt);
  ASSERT_EQ(ids.size(), 5386u);
  for (std::size_t k = 0; k < 384 * period.size(); ++k) ASSERT_EQ(ids[1 + k], period[k % period.size()]) << k;
  const Ids tail(ids.begin() + 1 + 384 * 14, ids.end());
  EXPECT_EQ(tail, (Ids{13137, 2044, 583, 7337, 74, 6981, 578, 335, 49407}));
  expect_padded_consistent(*sd1_, prompt);
}

TEST_F(ClipTokenizerRobustness, ArbitraryBytesNeverFail) {
  // Every byte value, in a deterministic scramble, with and without valid UTF-8 around it.
  std::string bytes;
  std::uint32_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    bytes += static_cast<char>(state >> 24);
    if (i % 97 == 0) bytes += "<|endoftext|>\xE4\xB8\x80 ";
  }
  expect_padded_consistent(*sd1_, bytes);
  expect_padded_consistent(*sd2_, bytes);
}

TEST_F(ClipTokenizerRobustness, CacheDoesNotChangeResults) {
  const std::string prompt = "a watercolor painting of a lighthouse by the sea at sunset";
  const Ids cold = sd1_->encode(prompt);
  EXPECT_EQ(sd1_->encode(prompt), cold);
  sd1_->clear_cache();
  EXPECT_EQ(sd1_->encode(prompt), cold);
}

}  // namespace
}  // namespace websd::test
