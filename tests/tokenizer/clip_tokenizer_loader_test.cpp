// Loading: which file wins, folder resolution, and one clear websd::Error naming the file for every
// missing or malformed input.
#include "pipeline/tokenizer/clip_tokenizer_loader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "support/fixtures.h"
#include "tokenizer_test_support.h"

namespace websd::test {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Loads `folder`, expects a websd::Error whose message holds every one of `parts`.
void expect_load_error(const std::string& folder, const std::vector<std::string>& parts) {
  try {
    load_clip_tokenizer(folder);
    ADD_FAILURE() << "loading " << folder << " did not fail";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

// A vocab.json + merges.txt folder whose files are given as text.
std::string text_folder(const std::string& tag, const std::string& vocab, const std::string& merges) {
  const std::string folder = make_temp_dir(tag);
  write_text_file(folder, "vocab.json", vocab);
  write_text_file(folder, "merges.txt", merges);
  return folder;
}

// A folder with the real SD 2.x tokenizer.json and the given tokenizer_config.json.
std::string sd2_json_with_config(const std::string& tag, const std::string& config) {
  const std::string folder = make_linked_folder(tag, {{"tokenizer.json", "clip-tokenizer-sd2/tokenizer.json"}});
  write_text_file(folder, "tokenizer_config.json", config);
  return folder;
}

TEST(ClipTokenizerLoader, TokenizerJsonWinsOverVocabAndMerges) {
  const ClipTokenizerSpec spec = read_clip_tokenizer_spec(fixture_path("clip-tokenizer-sd2"));
  EXPECT_TRUE(ends_with(spec.origin, "clip-tokenizer-sd2/tokenizer.json")) << spec.origin;
  EXPECT_EQ(spec.pad.content, "!");
  EXPECT_TRUE(ends_with(spec.pad.origin, "tokenizer_config.json")) << spec.pad.origin;
}

TEST(ClipTokenizerLoader, ConfigOverridesTokenizerJson) {
  // tokenizer.json pads with "!", the config beside it says <|endoftext|>: the config wins.
  const std::string folder = sd2_json_with_config("config-wins", R"({"pad_token": "<|endoftext|>"})");
  EXPECT_EQ(load_clip_tokenizer(folder).pad_id(), 49407);
  EXPECT_EQ(load_clip_tokenizer(fixture_path("clip-tokenizer-sd2")).pad_id(), 0);
}

TEST(ClipTokenizerLoader, OlderAddedTokenObjectsAndMaxLengthAreRead) {
  const std::string folder = sd2_json_with_config(
      "config-objects",
      R"({"pad_token": {"__type": "AddedToken", "content": "<|endoftext|>"}, "model_max_length": 10})");
  const ClipTokenizer tokenizer = load_clip_tokenizer(folder);
  EXPECT_EQ(tokenizer.pad_id(), 49407);
  EXPECT_EQ(tokenizer.encode("a photo of an astronaut riding a horse on mars."),
            (std::vector<TokenId>{49406, 320, 1125, 539, 550, 18376, 6765, 320, 4558, 49407}));
}

TEST(ClipTokenizerLoader, HuggingFaceNoLimitMaxLengthKeepsTheDefault) {
  const std::string folder = sd2_json_with_config("config-no-limit", R"({"model_max_length": 1e30})");
  EXPECT_EQ(load_clip_tokenizer(folder).max_length(), 77);
}

TEST(ClipTokenizerLoader, AddedTokensDecoderAddsTokens) {
  // A token that transformers 4 lists in added_tokens_decoder is matched whole in prompts.
  const std::string folder = sd2_json_with_config(
      "config-added", R"({"added_tokens_decoder": {"320": {"content": "zz", "special": false, "normalized": true}}})");
  const ClipTokenizer tokenizer = load_clip_tokenizer(folder);
  EXPECT_EQ(tokenizer.encode_unpadded("ZZ"), (std::vector<TokenId>{49406, 320, 49407}));
}

TEST(ClipTokenizerLoader, MissingFolderNamesIt) {
  expect_load_error("/nonexistent/websd-tokenizer", {"/nonexistent/websd-tokenizer", "does not exist"});
}

TEST(ClipTokenizerLoader, FolderWithoutTokenizerFilesNamesIt) {
  const std::string folder = make_temp_dir("empty-tokenizer");
  expect_load_error(folder, {folder, "no tokenizer.json or vocab.json + merges.txt"});
}

TEST(ClipTokenizerLoader, MissingMergesNamesTheFile) {
  const std::string folder = make_linked_folder("no-merges", {{"vocab.json", "clip-tokenizer/vocab.json"}});
  expect_load_error(folder, {"merges.txt"});
}

TEST(ClipTokenizerLoader, MissingVocabNamesTheFile) {
  const std::string folder = make_linked_folder("no-vocab", {{"merges.txt", "clip-tokenizer/merges.txt"}});
  expect_load_error(folder, {"vocab.json"});
}

TEST(ClipTokenizerLoader, MalformedVocabNamesTheFile) {
  expect_load_error(text_folder("vocab-syntax", R"({"a": 1,)", "#version: 0.2\na b\n"), {"vocab.json"});
  expect_load_error(text_folder("vocab-type", R"({"a": "one"})", "a b\n"), {"vocab.json", "[\"a\"]", "not a token id"});
  expect_load_error(text_folder("vocab-array", R"([1, 2])", "a b\n"),
                    {"vocab.json", "not a non-empty {token: id} object"});
}

TEST(ClipTokenizerLoader, MalformedMergesNameTheFileAndLine) {
  const std::string folder = make_temp_dir("merges-bad-line");
  std::filesystem::create_symlink(fixture_path("clip-tokenizer/vocab.json"), folder + "/vocab.json");
  write_text_file(folder, "merges.txt", "#version: 0.2\ni n\nthree parts here\n");
  expect_load_error(folder, {"merges.txt: line 3", "three parts here"});
  write_text_file(folder, "merges.txt", "i n\nq zzzz\n");
  expect_load_error(folder, {"merges.txt: merge 2 'q zzzz'", "not in the vocabulary"});
  write_text_file(folder, "merges.txt", "");
  expect_load_error(folder, {"merges.txt: no merges"});
}

TEST(ClipTokenizerLoader, HeaderOnlyMergesIsAByteLevelVocabulary) {
  const std::string folder = make_temp_dir("merges-header-only");
  std::filesystem::create_symlink(fixture_path("clip-tokenizer/vocab.json"), folder + "/vocab.json");
  write_text_file(folder, "merges.txt", "#version: 0.2\n");
  const auto tokenizer = load_clip_tokenizer(folder);
  // Without merges every byte stays its own symbol: "ab" -> "a", "b</w>".
  const auto ids = tokenizer.encode_unpadded("ab");
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids[1], 64);   // "a" in the CLIP vocabulary
  EXPECT_EQ(ids[2], 321);  // "b</w>"
}

TEST(ClipTokenizerLoader, UnknownSpecialTokenNamesTheConfig) {
  const std::string folder = sd2_json_with_config("config-unknown", R"({"pad_token": "<|notatoken|>"})");
  expect_load_error(folder, {"tokenizer_config.json", "pad_token '<|notatoken|>' is not in the vocabulary"});
}

TEST(ClipTokenizerLoader, MalformedConfigNamesTheFileAndKey) {
  expect_load_error(sd2_json_with_config("config-syntax", "{"), {"tokenizer_config.json"});
  expect_load_error(sd2_json_with_config("config-pad-type", R"({"pad_token": 5})"),
                    {"tokenizer_config.json: pad_token"});
  expect_load_error(sd2_json_with_config("config-length", R"({"model_max_length": 1})"),
                    {"tokenizer_config.json: model_max_length"});
}

TEST(ClipTokenizerLoader, MalformedTokenizerJsonNamesTheFile) {
  const auto json_folder = [](const std::string& tag, const std::string& text) {
    const std::string folder = make_temp_dir(tag);
    write_text_file(folder, "tokenizer.json", text);
    return folder;
  };
  expect_load_error(json_folder("json-no-model", "{}"), {"tokenizer.json: no 'model' section"});
  expect_load_error(json_folder("json-wordpiece", R"({"model": {"type": "WordPiece"}})"),
                    {"tokenizer.json", "WordPiece"});
  expect_load_error(json_folder("json-gpt2", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})"),
                    {"tokenizer.json", "end_of_word_suffix"});
  expect_load_error(
      json_folder("json-merge",
                  R"({"model": {"type": "BPE", "end_of_word_suffix": "</w>", "vocab": {"a": 0}, "merges": [7]}})"),
      {"tokenizer.json: model.merges[0]"});
}

}  // namespace
}  // namespace websd::test
