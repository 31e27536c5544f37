// The artifact reader on a real artifact: the cpu artifact that `websd build` makes of the
// tiny-sd15 fixture model (fixture_artifact.h). Runs natively and, on the same artifact, in the
// WebAssembly build under node, so the browser's reader is held to the same checks: the manifest,
// the index, every shard's and every listed file's SHA-256, a weight's bytes against the
// checkpoint, and a tampered shard or manifest named by the error.
#include "fixture_artifact.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "artifact/artifact_hex.h"
#include "artifact/function_signatures.h"
#include "artifact/sha256.h"
#include "artifact_file_edits.h"
#include "io/safetensors_reader.h"
#include "runtime/launch_list.h"
#include "support/fixtures.h"

namespace websd::artifact {
namespace {

Artifact open_fixture() { return Artifact::open(test::fixture_cpu_artifact(), ArtifactOpenOptions::for_target("cpu")); }

// The runtime's reader accepts every function's launch list (format 2) and finds it consistent
// with the functions section: what the browser's executor will load.
TEST(FixtureArtifact, EveryLaunchListReads) {
  const Artifact artifact = open_fixture();
  const nlohmann::json& lists = *artifact.section("launch_lists");
  const std::vector<FunctionSignature> functions =
      parse_functions_section(*artifact.section("functions"), artifact.dir());
  ASSERT_EQ(lists.size(), functions.size());
  for (const FunctionSignature& function : functions) {
    SCOPED_TRACE(function.symbol);
    const runtime::LaunchList list = runtime::launch_list_from_json(lists.at(function.symbol));
    EXPECT_EQ(list.symbol, function.symbol);
    EXPECT_EQ(list.inputs.size(), function.inputs.size());
    EXPECT_EQ(list.outputs.size(), function.outputs.size());
    EXPECT_FALSE(list.kernels.empty());
    EXPECT_EQ(list.memory.alignment, 64);
    EXPECT_GE(list.memory.total_bytes(), list.memory.peak_bytes);
  }
}

TEST(FixtureArtifact, ManifestDescribesTheCpuBuildOfTheModel) {
  const Artifact artifact = open_fixture();
  EXPECT_EQ(artifact.manifest().format_version, kArtifactFormatVersion);
  EXPECT_EQ(artifact.target(), "cpu");
  EXPECT_FALSE(artifact.encrypted());
  EXPECT_FALSE(artifact.manifest().websd_version.empty());
  EXPECT_EQ(artifact.section_names(), (std::vector<std::string>{"device_requirements", "files", "functions", "kernels",
                                                                "launch_lists", "memory_plans", "model"}));
  // The kernel library's instruction set (the default: every 64-bit x86 CPU).
  EXPECT_EQ(*artifact.section("device_requirements"), (nlohmann::json{{"cpu_arch", "x86-64"}}));
  const nlohmann::json& model = *artifact.section("model");
  EXPECT_EQ(model.at("storage_dtype"), "f32");
  EXPECT_EQ(model.at("latent_channels"), 4);
  EXPECT_EQ(model.at("max_tokens"), 77);
  EXPECT_GT(model.at("width").get<int>(), 0);
  EXPECT_GT(model.at("height").get<int>(), 0);
  std::vector<std::string> symbols;
  for (const FunctionSignature& function : parse_functions_section(*artifact.section("functions"), artifact.dir())) {
    symbols.push_back(function.symbol);
  }
  EXPECT_EQ(symbols, (std::vector<std::string>{"clip", "clip_b1", "unet", "unet_b1", "unet_cfg", "vae_decode",
                                               "vae_encode", "image_to_rgba"}));
}

TEST(FixtureArtifact, IndexPlacesEveryWeightInsideItsShard) {
  const Artifact artifact = open_fixture();
  ASSERT_FALSE(artifact.shards().empty());
  ASSERT_FALSE(artifact.weights().empty());
  std::set<std::string> names;
  for (const WeightEntry& entry : artifact.weights()) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    EXPECT_EQ(artifact.find_weight(entry.name), &entry);
    ASSERT_LT(entry.shard, artifact.shards().size()) << entry.name;
    EXPECT_EQ(entry.offset % kShardAlignment, 0u) << entry.name;
    EXPECT_LE(entry.offset + entry.bytes, artifact.shards()[entry.shard].bytes) << entry.name;
    EXPECT_EQ(entry.bytes, static_cast<std::uint64_t>(shape_numel(entry.shape)) * dtype_size(entry.dtype))
        << entry.name;
  }
  EXPECT_NE(artifact.find_weight("text_encoder/text_model.embeddings.token_embedding.weight"), nullptr);
}

TEST(FixtureArtifact, EveryShardMatchesItsSha256) {
  const Artifact artifact = open_fixture();
  for (std::size_t i = 0; i < artifact.shards().size(); ++i) {
    const WeightShard& shard = artifact.shards()[i];
    EXPECT_NO_THROW(artifact.verify_shard(i)) << shard.file;
    artifact.release_shard(i);
    // The same digest computed here from the file, not through the reader.
    const std::string bytes = test::read_text(artifact.dir() + "/weights/" + shard.file);
    EXPECT_EQ(bytes.size(), shard.bytes) << shard.file;
    EXPECT_EQ(sha256({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}), shard.sha256) << shard.file;
  }
}

TEST(FixtureArtifact, EveryListedFileMatchesItsSha256) {
  const Artifact artifact = open_fixture();
  std::set<std::string> paths;
  for (const nlohmann::json& file : *artifact.section("files")) {
    const std::string path = file.at("path");
    const std::vector<std::byte> bytes = artifact.file_bytes(path);
    EXPECT_EQ(bytes.size(), file.at("bytes").get<std::uint64_t>()) << path;
    EXPECT_EQ(hex_encode(sha256(bytes)), file.at("sha256")) << path;
    paths.insert(path);
  }
  for (const char* path :
       {"kernels/cpu_kernels.so", "model/tokenizer/tokenizer.json", "model/scheduler/scheduler_config.json"}) {
    EXPECT_EQ(paths.count(path), 1u) << path;
  }
}

TEST(FixtureArtifact, AWeightHoldsTheCheckpointsValues) {
  const Artifact artifact = open_fixture();
  const std::string name = "text_model.embeddings.position_embedding.weight";
  const std::span<const std::byte> stored = artifact.weight("text_encoder/" + name);
  const SafetensorsFile checkpoint(test::fixture_path("tiny-sd15/model/text_encoder/model.safetensors"));
  const HostTensor expected = checkpoint.read_f32(name);
  ASSERT_EQ(stored.size(), expected.data.size() * sizeof(float));
  std::vector<float> values(expected.data.size());
  std::memcpy(values.data(), stored.data(), stored.size());
  EXPECT_EQ(values, expected.data);
}

TEST(FixtureArtifact, ATamperedShardFailsNamingTheShard) {
  const std::string dir = test::make_temp_dir("fixture-artifact-tampered") + "/art";
  std::filesystem::copy(test::fixture_cpu_artifact(), dir, std::filesystem::copy_options::recursive);
  test::flip_byte(dir + "/weights/shard-00000.bin", 1000);
  const Artifact artifact = Artifact::open(dir, ArtifactOpenOptions::for_target("cpu"));  // the size is right
  const std::string message = test::error_of([&] { artifact.verify_shard(0); });
  EXPECT_NE(message.find(dir + "/weights/shard-00000.bin: checksum mismatch: SHA-256 "), std::string::npos) << message;
  const std::string weight = artifact.weights().front().name;
  EXPECT_NE(test::error_of([&] { artifact.weight(weight); }).find("shard-00000.bin: checksum mismatch"),
            std::string::npos);
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

// A manifest byte that parses the same (a space turned into a tab) is still a change: the seal's
// digest covers the manifest's bytes, here and in the browser's reader.
TEST(FixtureArtifact, AManifestByteChangedOutsideAnyValueFailsTheSeal) {
  const std::string dir = test::make_temp_dir("fixture-artifact-manifest") + "/art";
  std::filesystem::copy(test::fixture_cpu_artifact(), dir, std::filesystem::copy_options::recursive);
  std::string manifest = test::read_text(dir + "/manifest.json");
  manifest[manifest.find("\n  ") + 1] = '\t';
  test::write_text(dir + "/manifest.json", manifest);
  const std::string message = test::error_of([&] { Artifact::open(dir, ArtifactOpenOptions::for_target("cpu")); });
  EXPECT_NE(message.find(dir + "/manifest.json: checksum mismatch: SHA-256 "), std::string::npos) << message;
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

}  // namespace
}  // namespace websd::artifact
