// Writing an artifact and reading it back: bytes, shard layout, sections, encryption, replacing
// a previous artifact, and what a failed or refused build leaves behind.
#include <gtest/gtest.h>

#include <filesystem>

#include "artifact/artifact.h"
#include "artifact/artifact_hex.h"
#include "artifact/function_signatures.h"
#include "artifact_test_support.h"
#include "fetched_source.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using artifact::Artifact;

void expect_sample_weights(const Artifact& opened) {
  const auto tensors = test::sample_tensors();
  ASSERT_EQ(opened.weights().size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& entry = opened.weights()[i];
    EXPECT_EQ(entry.name, tensors[i].name);
    EXPECT_EQ(entry.shape, tensors[i].shape);
    EXPECT_EQ(entry.dtype, tensors[i].dtype);
    const auto bytes = opened.weight(tensors[i].name);
    ASSERT_EQ(bytes.size(), tensors[i].bytes.size()) << entry.name;
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), tensors[i].bytes.begin())) << entry.name;
  }
}

TEST(ArtifactRoundTrip, WeightsOfEveryDtypeComeBackExactly) {
  const std::string dir = test::make_temp_dir("artifact-roundtrip") + "/art";
  test::write_sample_artifact(dir);
  const Artifact opened = Artifact::open(dir, test::open_options("cpu"));
  EXPECT_EQ(opened.target(), "cpu");
  EXPECT_FALSE(opened.encrypted());
  EXPECT_EQ(opened.manifest().format_version, artifact::kArtifactFormatVersion);
  EXPECT_FALSE(opened.manifest().websd_version.empty());
  EXPECT_EQ(opened.manifest().created.size(), 20u) << opened.manifest().created;  // 2025-01-31T12:00:00Z
  expect_sample_weights(opened);
}

TEST(ArtifactRoundTrip, ShardsRespectTheLimitAndAlignment) {
  const std::string dir = test::make_temp_dir("artifact-shards") + "/art";
  test::write_sample_artifact(dir);
  const Artifact opened = Artifact::open(dir);
  // 32 B + 40 B share shard 0; the 400 B tensor (over the 256 B limit) has shard 1 to itself;
  // the next two share shard 2, the second at the next 64-byte boundary.
  ASSERT_EQ(opened.shards().size(), 3u);
  const std::vector<std::pair<std::size_t, std::uint64_t>> placement = {{0, 0}, {0, 64}, {1, 0}, {2, 0}, {2, 128}};
  for (std::size_t i = 0; i < placement.size(); ++i) {
    EXPECT_EQ(opened.weights()[i].shard, placement[i].first) << opened.weights()[i].name;
    EXPECT_EQ(opened.weights()[i].offset, placement[i].second) << opened.weights()[i].name;
  }
  EXPECT_EQ(opened.shards()[0].file, "shard-00000.bin");
  EXPECT_EQ(opened.shards()[0].bytes, 104u);
  EXPECT_EQ(opened.shards()[1].bytes, 400u);
  EXPECT_EQ(opened.shards()[2].bytes, 192u);
  EXPECT_EQ(fs::file_size(dir + "/weights/shard-00002.bin"), 192u);
}

TEST(ArtifactRoundTrip, SectionsAreKeptAndTheFunctionsSectionIsTyped) {
  const std::string dir = test::make_temp_dir("artifact-sections") + "/art";
  {
    artifact::ArtifactWriter writer(dir, "webgpu");
    writer.set_section("kernels", nlohmann::json::array({{{"name", "fused_conv_silu"}}, {{"name", "gemm"}}}));
    writer.set_section("notes", {{"anything", {1, 2, 3}}});
    writer.set_section(
        std::string(artifact::kFunctionsSection),
        artifact::functions_section_to_json({{"vae_decode", {{"z", "f32", {1, 4, -1, -1}}}, {}, 7, 128}}));
    writer.finish();
  }
  const Artifact opened = Artifact::open(dir, test::open_options("webgpu"));
  EXPECT_EQ(opened.section_names(), (std::vector<std::string>{"functions", "kernels", "notes"}));
  EXPECT_EQ((*opened.section("notes"))["anything"][2], 3);
  EXPECT_EQ(opened.section("weights"), nullptr);
  EXPECT_EQ(opened.section("memory_plans"), nullptr);
  const auto functions = artifact::parse_functions_section(*opened.section("functions"), dir);
  ASSERT_EQ(functions.size(), 1u);
  EXPECT_EQ(functions[0].symbol, "vae_decode");
  EXPECT_EQ(artifact::tensor_signature_to_string(functions[0].inputs[0]), "z: f32[1,4,?,?]");
  EXPECT_EQ(functions[0].launches, 7u);
  EXPECT_EQ(functions[0].arena_bytes, 128u);
  EXPECT_TRUE(opened.weights().empty());
  EXPECT_TRUE(opened.shards().empty());
}

TEST(ArtifactRoundTrip, EncryptedWeightsDecryptWithTheKey) {
  const std::string temp = test::make_temp_dir("artifact-encrypted");
  const std::string dir = temp + "/art";
  test::write_sample_artifact(dir, test::sample_key());
  // What is stored is not the plain bytes.
  const std::string shard = test::read_text(dir + "/weights/shard-00001.bin");
  const auto plain = test::sample_tensors()[2].bytes;
  EXPECT_FALSE(std::equal(plain.begin(), plain.end(), reinterpret_cast<const std::byte*>(shard.data())));
  EXPECT_EQ(test::read_text(dir + "/manifest.json").find(artifact::hex_encode(test::sample_key().bytes)),
            std::string::npos);

  const Artifact opened =
      Artifact::open(dir, test::open_options("cpu", test::write_hex_key_file(temp, test::sample_key())));
  EXPECT_TRUE(opened.encrypted());
  EXPECT_EQ(opened.manifest().encryption, "aes-256-gcm");
  for (const auto& shard_record : opened.shards()) {
    EXPECT_TRUE(shard_record.iv.has_value());
    EXPECT_TRUE(shard_record.tag.has_value());
  }
  EXPECT_NE(opened.shards()[0].iv, opened.shards()[1].iv) << "every shard needs its own IV";
  expect_sample_weights(opened);
}

// A source that fetches whole files (as a browser does) instead of mapping them: plain and
// encrypted shards stream one at a time, each read once until it is released.
TEST(ArtifactRoundTrip, ShardsStreamOneAtATimeThroughASourceThatFetches) {
  const std::string temp = test::make_temp_dir("artifact-fetched");
  test::write_sample_artifact(temp + "/plain");
  test::write_sample_artifact(temp + "/encrypted", test::sample_key());
  const std::string key_file = test::write_hex_key_file(temp, test::sample_key());
  for (const auto& [name, options] :
       {std::pair{"plain", test::open_options("cpu")}, std::pair{"encrypted", test::open_options("cpu", key_file)}}) {
    const auto reads = std::make_shared<test::FetchedSource::Reads>();
    const Artifact opened = Artifact::open(std::make_unique<test::FetchedSource>(temp + "/" + name, reads), options);
    const auto tensors = test::sample_tensors();
    for (std::size_t shard = 0; shard < opened.shards().size(); ++shard) {
      opened.verify_shard(shard);
      for (std::size_t i = 0; i < tensors.size(); ++i) {
        if (opened.weights()[i].shard != shard) continue;
        const auto bytes = opened.weight(tensors[i].name);
        EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), tensors[i].bytes.begin(), tensors[i].bytes.end()))
            << name << ": " << tensors[i].name;
      }
      opened.release_shard(shard);
      for (std::size_t other = 0; other < opened.shards().size(); ++other) {
        EXPECT_EQ(reads->count["weights/" + opened.shards()[other].file], other <= shard ? 1 : 0)
            << name << ": shard " << other << " after shard " << shard;
      }
    }
  }
}

TEST(ArtifactRoundTrip, KeyFilesHoldRawBytesOrHex) {
  const std::string temp = test::make_temp_dir("artifact-keys");
  const auto key = test::sample_key(9);
  test::write_text(temp + "/raw.key", std::string(reinterpret_cast<const char*>(key.bytes.data()), key.bytes.size()));
  test::write_text(temp + "/crlf.key", artifact::hex_encode(key.bytes) + "\r\n");
  EXPECT_EQ(artifact::read_artifact_key(temp + "/raw.key").bytes, key.bytes);
  EXPECT_EQ(artifact::read_artifact_key(temp + "/crlf.key").bytes, key.bytes);
  EXPECT_EQ(artifact::read_artifact_key(test::write_hex_key_file(temp, key)).bytes, key.bytes);
  test::write_text(temp + "/short.key", "00112233");
  EXPECT_NE(test::error_of([&] {
              artifact::read_artifact_key(temp + "/short.key");
            }).find("holds 8 bytes that are neither 32 raw bytes nor 64 hex digits"),
            std::string::npos);
  EXPECT_NE(artifact::artifact_key_check(key), artifact::artifact_key_check(test::sample_key(10)));
}

TEST(ArtifactRoundTrip, ANewBuildReplacesAPreviousArtifact) {
  const std::string dir = test::make_temp_dir("artifact-replace") + "/art";
  test::write_sample_artifact(dir);
  {
    artifact::ArtifactWriter writer(dir, "cuda");
    writer.finish();
  }
  const Artifact opened = Artifact::open(dir, test::open_options("cuda"));
  EXPECT_TRUE(opened.weights().empty());
  EXPECT_FALSE(fs::exists(dir + "/weights/shard-00000.bin"));
  // Nothing is left beside it: no staging or previous directory.
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(dir).parent_path()), fs::directory_iterator()), 1);
}

TEST(ArtifactRoundTrip, AnUnfinishedBuildLeavesNothingBehind) {
  const std::string parent = test::make_temp_dir("artifact-unfinished");
  {
    artifact::ArtifactWriter writer(parent + "/art", "cpu", test::small_shard_options());
    const auto tensors = test::sample_tensors();
    writer.add_weight(tensors[0].name, tensors[0].shape, tensors[0].dtype, tensors[0].bytes);
    // A bad tensor stops the build; the writer refuses to go on.
    EXPECT_NE(test::error_of([&] {
                writer.add_weight("bad", {3}, DType::kF32, tensors[0].bytes);
              }).find("weight 'bad': 32 bytes given, shape [3] x f32 needs 12"),
              std::string::npos);
    EXPECT_NE(test::error_of([&] { writer.finish(); }).find("an earlier error left the artifact incomplete"),
              std::string::npos);
  }
  EXPECT_TRUE(fs::is_empty(parent));
}

TEST(ArtifactRoundTrip, WriterRefusesToOverwriteOtherDirectoriesAndBadInput) {
  const std::string parent = test::make_temp_dir("artifact-refuse");
  fs::create_directory(parent + "/photos");
  test::write_text(parent + "/photos/cat.png", "not an artifact");
  EXPECT_NE(test::error_of([&] {
              artifact::ArtifactWriter(parent + "/photos", "cpu");
            }).find("exists and is not a websd artifact; refusing to overwrite it"),
            std::string::npos);
  EXPECT_EQ(test::read_text(parent + "/photos/cat.png"), "not an artifact");
  EXPECT_NE(test::error_of([&] {
              artifact::ArtifactWriter(parent + "/photos/cat.png", "cpu");
            }).find("exists and is not a directory"),
            std::string::npos);

  artifact::ArtifactWriter writer(parent + "/art", "cpu");
  const std::vector<std::byte> four(4);
  EXPECT_NE(test::error_of([&] { writer.set_section("weights", {}); }).find("reserved"), std::string::npos);
  EXPECT_NE(test::error_of([&] {
              writer.add_weight("ids", {1}, DType::kI32, four);
            }).find("weights are stored as f32, f16 or bf16, not I32"),
            std::string::npos);
}

TEST(ArtifactRoundTrip, WeightLookupNamesAnUnknownTensor) {
  const std::string dir = test::make_temp_dir("artifact-lookup") + "/art";
  test::write_sample_artifact(dir);
  const Artifact opened = Artifact::open(dir);
  EXPECT_EQ(opened.find_weight("nope"), nullptr);
  ASSERT_NE(opened.find_weight("unet.bias"), nullptr);
  EXPECT_EQ(opened.find_weight("unet.bias")->dtype, DType::kBF16);
  EXPECT_NE(test::error_of([&] { opened.weight("nope"); }).find("no weight named nope (the artifact holds 5 weights"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
