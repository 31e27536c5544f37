// Exact parity with Hugging Face's CLIPTokenizer on the fixture prompts, for every file layout that
// SD checkpoints ship: vocab.json + merges.txt, tokenizer.json (with and without a config beside it),
// a tokenizer folder and a diffusers model folder.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <ostream>

#include "io/json_file.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"
#include "support/fixtures.h"
#include "tokenizer_test_support.h"

namespace websd::test {
namespace {

enum class Variant { kSd1, kSd2 };

struct Layout {
  std::string name;
  std::function<std::string()> folder;
  Variant variant;
};

void PrintTo(const Layout& layout, std::ostream* out) { *out << layout.name; }

std::vector<Layout> layouts() {
  return {
      {"sd1_vocab_merges", [] { return fixture_path("clip-tokenizer"); }, Variant::kSd1},
      {"sd1_tokenizer_json", [] { return fixture_path("tiny-sd15/model/tokenizer"); }, Variant::kSd1},
      {"sd1_model_folder", [] { return fixture_path("tiny-sd15/model"); }, Variant::kSd1},
      // Both forms present: tokenizer.json wins.
      {"sd2_both_forms", [] { return fixture_path("clip-tokenizer-sd2"); }, Variant::kSd2},
      {"sd2_vocab_merges",
       [] {
         return make_linked_folder("sd2-vocab",
                                   {{"vocab.json", "clip-tokenizer-sd2/vocab.json"},
                                    {"merges.txt", "clip-tokenizer-sd2/merges.txt"},
                                    {"tokenizer_config.json", "clip-tokenizer-sd2/tokenizer_config.json"},
                                    {"special_tokens_map.json", "clip-tokenizer-sd2/special_tokens_map.json"}});
       },
       Variant::kSd2},
      {"sd2_tokenizer_json_hf5_config",
       [] {
         return make_linked_folder("sd2-hf5",
                                   {{"tokenizer.json", "clip-tokenizer-sd2/tokenizer.json"},
                                    {"tokenizer_config.json", "clip-tokenizer-sd2/tokenizer_config.hf5.json"}});
       },
       Variant::kSd2},
      {"sd2_tokenizer_json_alone",
       [] {
         return make_linked_folder("sd2-json", {{"tokenizer.json", "clip-tokenizer-sd2/tokenizer.json"}});
       },
       Variant::kSd2},
  };
}

// Each layout is loaded once for all its tests.
const ClipTokenizer& tokenizer_for(const Layout& layout) {
  static std::map<std::string, std::unique_ptr<ClipTokenizer>> loaded;
  std::unique_ptr<ClipTokenizer>& tokenizer = loaded[layout.name];
  if (!tokenizer) tokenizer = std::make_unique<ClipTokenizer>(load_clip_tokenizer(layout.folder()));
  return *tokenizer;
}

class ClipTokenizerParity : public ::testing::TestWithParam<Layout> {};

TEST_P(ClipTokenizerParity, PaddedIdsMatchEveryFixturePrompt) {
  const Layout& layout = GetParam();
  const ClipTokenizer& tokenizer = tokenizer_for(layout);
  const TokenizerRefs& refs = tokenizer_refs();
  const IdRows& expected = layout.variant == Variant::kSd1 ? refs.sd1_padded : refs.sd2_padded;
  ASSERT_EQ(expected.size(), refs.prompts.size());
  for (std::size_t i = 0; i < refs.prompts.size(); ++i) {
    EXPECT_EQ(tokenizer.encode(refs.prompts[i]), expected[i]) << "prompt " << i << ": " << refs.prompts[i];
  }
}

TEST_P(ClipTokenizerParity, UnpaddedIdsMatchEveryFixturePrompt) {
  const Layout& layout = GetParam();
  const ClipTokenizer& tokenizer = tokenizer_for(layout);
  const TokenizerRefs& refs = tokenizer_refs();
  const IdRows& expected = layout.variant == Variant::kSd1 ? refs.sd1_unpadded : refs.sd2_unpadded;
  ASSERT_EQ(expected.size(), refs.prompts.size());
  for (std::size_t i = 0; i < refs.prompts.size(); ++i) {
    EXPECT_EQ(tokenizer.encode_unpadded(refs.prompts[i]), expected[i]) << "prompt " << i << ": " << refs.prompts[i];
  }
}

TEST_P(ClipTokenizerParity, SpecialIdsFollowTheVariant) {
  const Layout& layout = GetParam();
  const ClipTokenizer& tokenizer = tokenizer_for(layout);
  EXPECT_EQ(tokenizer.bos_id(), 49406);
  EXPECT_EQ(tokenizer.eos_id(), 49407);
  EXPECT_EQ(tokenizer.pad_id(), layout.variant == Variant::kSd1 ? 49407 : 0);
  EXPECT_EQ(tokenizer.max_length(), 77);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ClipTokenizerParity, ::testing::ValuesIn(layouts()),
                         [](const auto& info) { return info.param.name; });

TEST(ClipTokenizerParity, TinySd15ReferenceIds) {
  const nlohmann::json cases = json_read_file(fixture_path("tiny-sd15/reference/cases.json"));
  const auto prompts = cases.at("tok.prompts").get<std::vector<std::string>>();
  const IdRows expected = read_id_rows(fixture_path("tiny-sd15/reference/expected.safetensors"), "tok.ids");
  ASSERT_EQ(expected.size(), prompts.size());
  const ClipTokenizer tokenizer = load_clip_tokenizer(fixture_path("tiny-sd15/model"));
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(tokenizer.encode(prompts[i]), expected[i]) << "prompt " << i << ": " << prompts[i];
  }
}

}  // namespace
}  // namespace websd::test
