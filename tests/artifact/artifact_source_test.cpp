// Reading an artifact through a source that fetches whole files (fetched_source.h), as the
// browser will: shard by shard (verify, use, release), listed files as bytes, no local paths, and
// messages that name the source. Runs natively and in the WebAssembly build, on the fixture's cpu
// artifact.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "artifact/sha256.h"
#include "artifact_file_edits.h"
#include "fetched_source.h"
#include "fixture_artifact.h"
#include "runtime/artifact_weight_source.h"
#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd::artifact {
namespace {

using test::error_of;
using test::FetchedSource;

Artifact open_fetched(const std::string& dir, const std::shared_ptr<FetchedSource::Reads>& reads) {
  return Artifact::open(std::make_unique<FetchedSource>(dir, reads), ArtifactOpenOptions::for_target("cpu"));
}

TEST(ArtifactSource, ShardsAreReadOnceWhenVerifiedAndAgainAfterRelease) {
  const std::string dir = test::fixture_cpu_artifact();
  const auto reads = std::make_shared<FetchedSource::Reads>();
  const Artifact fetched = open_fetched(dir, reads);
  const Artifact local = Artifact::open(dir, ArtifactOpenOptions::for_target("cpu"));
  EXPECT_EQ(fetched.dir(), "fetched:" + dir);
  EXPECT_EQ(reads->count["manifest.json"], 1);
  EXPECT_EQ(reads->count["weights/index.json"], 1);

  for (std::size_t i = 0; i < fetched.shards().size(); ++i) {
    const std::string shard = "weights/" + fetched.shards()[i].file;
    EXPECT_EQ(reads->count[shard], 0) << "open() reads no shard";
    fetched.verify_shard(i);
    for (const WeightEntry& entry : fetched.weights()) {
      if (entry.shard != i) continue;
      const auto bytes = fetched.weight(entry.name);
      const auto expected = local.weight(entry.name);
      ASSERT_TRUE(std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end())) << entry.name;
    }
    EXPECT_EQ(reads->count[shard], 1) << "a verified shard is kept until released";
    fetched.release_shard(i);
  }
  const WeightEntry& first = fetched.weights().front();
  fetched.weight(first.name);
  EXPECT_EQ(reads->count["weights/" + fetched.shards()[first.shard].file], 2)
      << "a released shard is read and verified again";
}

TEST(ArtifactSource, AShardIsCheckedByTheDigestItsSourceComputedWhenItGivesOne) {
  const std::string dir = test::fixture_cpu_artifact();
  const auto open_with = [&](std::function<std::optional<Sha256Digest>(const std::string&)> digest_of) {
    auto source = std::make_unique<FetchedSource>(dir, std::make_shared<FetchedSource::Reads>());
    source->set_digests(std::move(digest_of));
    return Artifact::open(std::move(source), ArtifactOpenOptions::for_target("cpu"));
  };
  // The true digests (what a host hashing as it reads reports): no hashing in the runtime.
  const Artifact hashed = open_with([&](const std::string& path) -> std::optional<Sha256Digest> {
    const std::string bytes = test::read_bytes(dir + "/" + path);
    return sha256(std::as_bytes(std::span(bytes.data(), bytes.size())));
  });
  hashed.verify_shard(0);
  EXPECT_EQ(hashed.shard_load_times().hashed_by_source, 1);
  EXPECT_EQ(hashed.shard_load_times().shards, 1);
  // A digest that is not the index's is a checksum mismatch, as the runtime's own would be.
  const auto lying_about = [](std::string_view prefix) {
    return [prefix](const std::string& path) {
      return path.starts_with(prefix) ? std::optional<Sha256Digest>(Sha256Digest{}) : std::nullopt;
    };
  };
  const Artifact lying = open_with(lying_about("weights/shard"));
  EXPECT_NE(error_of([&] { lying.verify_shard(0); }).find("checksum mismatch: SHA-256 0000"), std::string::npos);
  // The manifest and the files it lists are checked by the source's digest too.
  EXPECT_NE(error_of([&] { open_with(lying_about("manifest.json")); }).find("manifest.json: checksum mismatch"),
            std::string::npos);
  const Artifact lying_about_files = open_with(lying_about("model/"));
  EXPECT_NE(error_of([&] {
              lying_about_files.file_bytes("model/scheduler/scheduler_config.json");
            }).find("checksum mismatch in file model/scheduler/scheduler_config.json"),
            std::string::npos);
  // No digest: the runtime hashes.
  const Artifact plain = open_with([](const std::string&) { return std::nullopt; });
  plain.verify_shard(0);
  EXPECT_EQ(plain.shard_load_times().hashed_by_source, 0);
  EXPECT_EQ(plain.shard_load_times().shards, 1);
}

TEST(ArtifactSource, ListedFilesAreBytesAndHaveNoLocalPath) {
  const std::string dir = test::fixture_cpu_artifact();
  const Artifact fetched = open_fetched(dir, std::make_shared<FetchedSource::Reads>());
  const std::vector<std::byte> config = fetched.file_bytes("model/scheduler/scheduler_config.json");
  const std::string text = test::read_text(dir + "/model/scheduler/scheduler_config.json");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(config.data()), config.size()), text);
  EXPECT_EQ(fetched.local_file_path("kernels/cpu_kernels.so"), std::nullopt);
  EXPECT_EQ(Artifact::open(dir).local_file_path("kernels/cpu_kernels.so"), dir + "/kernels/cpu_kernels.so");
  const std::string message = test::error_of([&] { fetched.local_file_path("kernels/other.so"); });
  EXPECT_NE(message.find("fetched:" + dir + ": lists no file kernels/other.so"), std::string::npos) << message;
}

// What a device gets of a kernel file: the checked bytes always (WGSL is compiled from them), the
// path only from a local folder.
TEST(ArtifactSource, KernelFilesReachDevicesAsBytesAndALocalPathWhenThereIsOne) {
  const std::string dir = test::fixture_cpu_artifact();
  const Artifact fetched = open_fetched(dir, std::make_shared<FetchedSource::Reads>());
  const runtime::KernelFile from_fetch = runtime::artifact_kernel_files(fetched)("kernels/cpu_kernels.so");
  EXPECT_EQ(from_fetch.bytes, FolderSource(dir).read("kernels/cpu_kernels.so"));
  EXPECT_FALSE(from_fetch.local_path.has_value());
  const Artifact local = Artifact::open(dir);
  const runtime::KernelFile from_folder = runtime::artifact_kernel_files(local)("kernels/cpu_kernels.so");
  EXPECT_EQ(from_folder.bytes, from_fetch.bytes);
  EXPECT_EQ(from_folder.local_path, dir + "/kernels/cpu_kernels.so");
}

TEST(ArtifactSource, ErrorsNameTheFileInTheSource) {
  const std::string dir = test::make_temp_dir("artifact-source-tampered") + "/art";
  std::filesystem::copy(test::fixture_cpu_artifact(), dir, std::filesystem::copy_options::recursive);
  test::flip_byte(dir + "/weights/shard-00000.bin", 64);
  test::flip_byte(dir + "/model/tokenizer/tokenizer_config.json", 3);
  const Artifact fetched = open_fetched(dir, std::make_shared<FetchedSource::Reads>());
  EXPECT_NE(test::error_of([&] {
              fetched.verify_shard(0);
            }).find("fetched:" + dir + "/weights/shard-00000.bin: checksum mismatch: SHA-256 "),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              fetched.file_bytes("model/tokenizer/tokenizer_config.json");
            }).find("fetched:" + dir + ": checksum mismatch in file model/tokenizer/tokenizer_config.json"),
            std::string::npos);
  std::filesystem::remove(dir + "/weights/shard-00000.bin");
  EXPECT_NE(test::error_of([&] {
              open_fetched(dir, std::make_shared<FetchedSource::Reads>());
            }).find("fetched:" + dir + "/weights/shard-00000.bin: missing shard"),
            std::string::npos);
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

}  // namespace
}  // namespace websd::artifact
