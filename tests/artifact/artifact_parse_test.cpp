// parse_manifest and parse_weight_index on bytes, as a fuzzer drives them: hostile or malformed
// text is refused with one line naming the field, and never crashes the parser.
#include <gtest/gtest.h>

#include <random>

#include "artifact/artifact_manifest.h"
#include "artifact/weight_index.h"
#include "artifact_test_support.h"
#include "core/error.h"
#include "support/fixtures.h"

namespace websd {
namespace {

using artifact::parse_manifest;
using artifact::parse_weight_index;

const std::string kSha = std::string(64, 'a');

std::string index_with_tensor(const std::string& tensor_json, const std::string& shards_json = "") {
  const std::string shards =
      shards_json.empty() ? R"([{"file": "shard-00000.bin", "bytes": 256, "sha256": ")" + kSha + R"("}])" : shards_json;
  return R"({"shards": )" + shards + R"(, "tensors": [)" + tensor_json + "]}";
}

std::string index_error(const std::string& text) {
  return test::error_of([&] { parse_weight_index(text, "idx.json"); });
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
}

TEST(ArtifactParse, ManifestRoundTripsThroughText) {
  artifact::ArtifactManifest manifest;
  manifest.websd_version = "0.1.0";
  manifest.target = "cuda";
  manifest.created = "2025-01-31T12:00:00Z";
  manifest.encryption = "aes-256-gcm";
  manifest.key_check = "hmac-sha256:" + kSha;
  manifest.weights_index_sha256 = kSha;
  manifest.sections["future_section"] = {{"x", 1}};
  const auto parsed = parse_manifest(manifest_to_text(manifest), "m.json");
  EXPECT_EQ(parsed.target, "cuda");
  EXPECT_TRUE(parsed.encrypted());
  EXPECT_EQ(parsed.key_check, manifest.key_check);
  EXPECT_EQ(parsed.weights_index_sha256, kSha);
  EXPECT_EQ(parsed.sections, manifest.sections);
}

TEST(ArtifactParse, ManifestRefusesDeepNestingAndDuplicateKeys) {
  const std::string deep =
      R"({"magic": "websd-artifact", "x": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  expect_contains(test::error_of([&] { parse_manifest(deep, "m.json"); }), "nesting deeper than 64 levels");
  expect_contains(test::error_of([&] { parse_manifest(R"({"magic": "websd-artifact", "magic": "x"})", "m.json"); }),
                  "the key 'magic' appears twice in one object");
  expect_contains(test::error_of([&] { parse_manifest("", "m.json"); }), "m.json: not valid JSON");
}

TEST(ArtifactParse, IndexRoundTripsThroughText) {
  artifact::WeightIndex index;
  index.shards.push_back({"shard-00000.bin", 192, {}, artifact::AesGcmIv{1, 2}, artifact::AesGcmTag{3}});
  index.tensors.push_back({"w", {2, 3}, DType::kBF16, 0, 128, 12});
  const auto parsed = parse_weight_index(artifact::weight_index_to_text(index), "idx.json");
  ASSERT_EQ(parsed.tensors.size(), 1u);
  EXPECT_EQ(parsed.tensors[0].shape, (Shape{2, 3}));
  EXPECT_EQ(parsed.tensors[0].dtype, DType::kBF16);
  EXPECT_EQ(parsed.tensors[0].offset, 128u);
  EXPECT_EQ(parsed.shards[0].iv, index.shards[0].iv);
  EXPECT_EQ(parsed.shards[0].tag, index.shards[0].tag);
}

TEST(ArtifactParse, IndexEntriesAreCheckedAgainstShapeDtypeAndAlignment) {
  expect_contains(index_error(index_with_tensor(
                      R"({"name": "w", "shape": [3], "dtype": "f32", "shard": 0, "offset": 0, "bytes": 16})")),
                  "tensors[0] ('w'): 16 bytes disagree with shape [3] x f32");
  expect_contains(index_error(index_with_tensor(
                      R"({"name": "w", "shape": [4], "dtype": "f32", "shard": 0, "offset": 32, "bytes": 16})")),
                  "offset 32 is not a multiple of 64");
  expect_contains(index_error(index_with_tensor(
                      R"({"name": "w", "shape": [-4], "dtype": "f32", "shard": 0, "offset": 0, "bytes": 16})")),
                  "tensors[0].shape[0] is the integer -4, expected a non-negative integer");
  expect_contains(
      index_error(index_with_tensor(
          R"({"name": "w", "shape": [4294967296, 4294967296], "dtype": "f32", "shard": 0, "offset": 0, "bytes": 0})")),
      "0 bytes disagree with shape");
  expect_contains(index_error(index_with_tensor(
                      R"({"name": "w", "shape": [4], "dtype": "i64", "shard": 0, "offset": 0, "bytes": 32})")),
                  "field 'tensors[0].dtype' is the string 'i64', expected f32, f16 or bf16");
  expect_contains(
      index_error(index_with_tensor(
          R"({"name": "w", "shape": [4], "dtype": "f32", "shard": 0, "offset": 18446744073709551552, "bytes": 16})")),
      "index entry out of its shard's bounds");
  const std::string entry = R"({"name": "w", "shape": [4], "dtype": "f32", "shard": 0, "offset": 0, "bytes": 16})";
  expect_contains(index_error(index_with_tensor(entry + "," + entry)), "tensors[1] repeats the tensor name 'w'");
}

TEST(ArtifactParse, IndexShardsAreCheckedForNamesAndEncryptionFields) {
  const auto shards = [](const std::string& items) { return index_with_tensor("", "[" + items + "]"); };
  expect_contains(index_error(shards(R"({"file": "../../etc/passwd", "bytes": 1, "sha256": ")" + kSha + R"("})")),
                  "expected a plain file name inside weights/");
  expect_contains(index_error(shards(R"({"file": "a.bin", "bytes": 1, "sha256": "xyz"})")),
                  "field 'shards[0].sha256' is the string 'xyz', expected 64 hex digits");
  expect_contains(index_error(shards(R"({"file": "a.bin", "bytes": 1, "sha256": ")" + kSha + R"(", "iv": "00"})")),
                  "shards[0] has only one of 'iv' and 'tag'");
  const std::string encrypted = R"({"file": "a.bin", "bytes": 1, "sha256": ")" + kSha + R"(", "iv": ")" +
                                std::string(24, '0') + R"(", "tag": ")" + std::string(32, '0') + R"("})";
  expect_contains(index_error(shards(encrypted + R"(, {"file": "b.bin", "bytes": 1, "sha256": ")" + kSha + R"("})")),
                  "shards[1] lacks the 'iv' and 'tag' of encryption, unlike shards[0]");
  expect_contains(index_error(shards(encrypted + "," + encrypted)), "shards[1] names the file 'a.bin' a second time");
  expect_contains(index_error(R"({"shards": {}, "tensors": []})"),
                  "field 'shards' is a JSON object, expected an array");
}

// Random byte edits of valid files: every outcome is a parse or a websd::Error, never a crash.
TEST(ArtifactParse, MutatedInputsNeverCrash) {
  const std::string dir = test::make_temp_dir("artifact-mutate") + "/art";
  test::write_sample_artifact(dir, test::sample_key());
  const std::string manifest = test::read_text(dir + "/manifest.json");
  const std::string index = test::read_text(dir + "/weights/index.json");
  std::mt19937 random(1234);
  int refused = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text = round % 2 == 0 ? manifest : index;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = random() % text.size();
      switch (random() % 3) {
        case 0:
          text[at] = static_cast<char>(random() % 256);
          break;
        case 1:
          text.erase(at, 1 + random() % 8);
          break;
        default:
          text.insert(at, 1, "0123456789[]{}\",:-e"[random() % 19]);
      }
    }
    try {
      if (round % 2 == 0)
        parse_manifest(text, "m.json");
      else
        parse_weight_index(text, "idx.json");
    } catch (const Error& error) {
      ++refused;
      EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
    }
  }
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace websd
