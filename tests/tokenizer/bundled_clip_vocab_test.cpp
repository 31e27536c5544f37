// The bundled CLIP vocabulary (third_party/openai-clip) is Hugging Face's openai/clip-vit-large-patch14
// tokenizer token for token, gives the fixture ids for SD 1.x and 2.x padding, and survives a round
// trip through the files it writes.
#include "pipeline/tokenizer/bundled_clip_vocab.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "io/json_file.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"
#include "pipeline/tokenizer/hf_tokenizer_files.h"
#include "support/error_text.h"
#include "support/fixtures.h"
#include "tokenizer_test_support.h"

namespace websd::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

// Compares by token and reports at most a few differences, not two 49408-entry maps.
void expect_same_vocab(const BpeVocab& actual, const BpeVocab& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  int reported = 0;
  for (const auto& [token, id] : expected) {
    const auto found = actual.find(token);
    const bool same = found != actual.end() && found->second == id;
    EXPECT_TRUE(same || ++reported > 5) << "token '" << token << "': expected id " << id << ", got "
                                        << (found == actual.end() ? std::string("none")
                                                                  : std::to_string(found->second));
  }
  EXPECT_EQ(reported, 0);
}

void expect_fixture_ids(const ClipTokenizer& tokenizer, const IdRows& expected) {
  const TokenizerRefs& refs = tokenizer_refs();
  ASSERT_EQ(expected.size(), refs.prompts.size());
  for (std::size_t i = 0; i < refs.prompts.size(); ++i) {
    EXPECT_EQ(tokenizer.encode(refs.prompts[i]), expected[i]) << "prompt " << i << ": " << refs.prompts[i];
  }
}

TEST(BundledClipVocab, MergesTextIsHuggingFacesMergesTxt) {
  EXPECT_TRUE(bundled_clip_merges_txt() == read_text(fixture_path("clip-tokenizer/merges.txt")));
}

TEST(BundledClipVocab, VocabAndMergesEqualTheFixtureTokenizer) {
  const ClipTokenizerSpec spec = bundled_clip_tokenizer_spec("<|endoftext|>");
  expect_same_vocab(spec.vocab, read_vocab_json(fixture_path("clip-tokenizer/vocab.json")));
  EXPECT_TRUE(spec.merges == read_merges_txt(fixture_path("clip-tokenizer/merges.txt")));
  EXPECT_EQ(spec.merges.size(), 48894U);
  EXPECT_EQ(spec.vocab.at("!"), 0);  // bytes_to_unicode() order: printable bytes first
  EXPECT_EQ(spec.vocab.at("<|endoftext|>"), 49407);
  EXPECT_EQ(spec.origin, "websd's bundled CLIP vocabulary (third_party/openai-clip)");
}

TEST(BundledClipVocab, Sd1PaddingGivesTheFixtureIds) {
  const ClipTokenizer tokenizer(bundled_clip_tokenizer_spec("<|endoftext|>"));
  EXPECT_EQ(tokenizer.pad_id(), 49407);
  expect_fixture_ids(tokenizer, tokenizer_refs().sd1_padded);
}

TEST(BundledClipVocab, Sd2PaddingGivesTheFixtureIds) {
  const ClipTokenizer tokenizer(bundled_clip_tokenizer_spec("!"));
  EXPECT_EQ(tokenizer.pad_id(), 0);
  expect_fixture_ids(tokenizer, tokenizer_refs().sd2_padded);
}

TEST(BundledClipVocab, WrittenFilesLoadIntoTheSameTokenizer) {
  for (const std::string pad : {"<|endoftext|>", "!"}) {
    const std::map<std::string, std::string> files = bundled_clip_tokenizer_files(pad);
    const std::string folder = make_temp_dir("bundled-clip");
    for (const auto& [name, text] : files) write_text_file(folder, name, text);
    ASSERT_EQ(files.size(), 4U);
    EXPECT_EQ(files.at("vocab.json").find('\n'), files.at("vocab.json").size() - 1) << "vocab.json is not compact";
    EXPECT_EQ(json_read_file(folder + "/tokenizer_config.json").at("pad_token"), pad);

    const ClipTokenizerSpec spec = read_clip_tokenizer_spec(folder);
    const ClipTokenizerSpec bundled = bundled_clip_tokenizer_spec(pad);
    expect_same_vocab(spec.vocab, bundled.vocab);
    EXPECT_TRUE(spec.merges == bundled.merges);
    const ClipTokenizer tokenizer(spec);
    EXPECT_EQ(tokenizer.pad_id(), ClipTokenizer(bundled).pad_id());
    const TokenizerRefs& refs = tokenizer_refs();
    expect_fixture_ids(tokenizer, pad == "!" ? refs.sd2_padded : refs.sd1_padded);
  }
}

TEST(BundledClipVocab, UnknownPadTokenIsOneClearError) {
  for (const auto& body : {std::function<void()>([] { bundled_clip_tokenizer_spec("<pad>"); }),
                           std::function<void()>([] { bundled_clip_tokenizer_files("<pad>"); })}) {
    const std::string message = error_of(body);
    EXPECT_EQ(message,
              "[tokenizer] websd's bundled CLIP vocabulary (third_party/openai-clip): pad token '<pad>' is not in the "
              "vocabulary (SD 1.x pads with '<|endoftext|>', SD 2.x with '!')");
  }
}

}  // namespace
}  // namespace websd::test
