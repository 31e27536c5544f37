// The prepared-weight cache's file and folder: a file reads back what was written and refuses
// damage (flipped bytes, truncation, a foreign file); the folder finds a file by content digest and
// signature, removes a damaged one instead of using it, keeps its size bound by removing the least
// recently used files, and sweeps temporary files of writers that died.
#include "backends/prepared_weight_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/component_digest.h"
#include "core/error.h"
#include "import/diffusers_checkpoint.h"
#include "models/random_checkpoint.h"
#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using backends::PreparedWeightCache;
using backends::PreparedWeightData;
using backends::PreparedWeightFile;
using backends::PreparedWeightsHeader;

std::vector<std::byte> pattern(std::size_t bytes, int seed) {
  std::vector<std::byte> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<std::byte>((i * 131 + seed * 7) & 0xff);
  return data;
}

PreparedWeightsHeader header_for(const std::string& digest) {
  return {"unet", "/models/sd15", digest, "websd test; oneDNN test"};
}

void flip_byte(const std::string& path, std::uint64_t offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  file.get(byte);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(static_cast<char>(byte ^ 0x40));
}

std::string digest_text(char digit) { return std::string(64, digit); }

TEST(PreparedWeightFile, ReadsBackEveryWeightPageAligned) {
  const std::string path = test::make_temp_dir("wpw") + "/a.wpw";
  const auto first = pattern(10000, 1);
  const auto second = pattern(3, 2);
  backends::write_prepared_weight_file(path, header_for(digest_text('a')), {{"w1", first}, {"w0", second}});
  EXPECT_EQ(fs::file_size(path),
            backends::prepared_weight_file_bytes(header_for(digest_text('a')), {{"w1", first}, {"w0", second}}));
  const auto file = PreparedWeightFile::open(path);
  EXPECT_EQ(file->header().component, "unet");
  EXPECT_EQ(file->header().digest, digest_text('a'));
  EXPECT_EQ(file->entry_count(), 2u);
  EXPECT_EQ(file->verify(false), std::nullopt);
  const auto w1 = file->find("w1");
  ASSERT_TRUE(w1.has_value());
  EXPECT_TRUE(std::equal(w1->begin(), w1->end(), first.begin(), first.end()));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w1->data()) % 4096, 0u);
  const auto w0 = file->find("w0");
  ASSERT_TRUE(w0.has_value());
  EXPECT_TRUE(std::equal(w0->begin(), w0->end(), second.begin(), second.end()));
  EXPECT_FALSE(file->find("w2").has_value());
}

TEST(PreparedWeightFile, AFlippedDataByteFailsVerification) {
  const std::string path = test::make_temp_dir("wpw") + "/a.wpw";
  backends::write_prepared_weight_file(path, header_for(digest_text('a')), {{"w", pattern(8192, 1)}});
  flip_byte(path, fs::file_size(path) - 100);
  const auto file = PreparedWeightFile::open(path);
  EXPECT_EQ(file->verify(true), std::optional<std::string>("w"));
}

TEST(PreparedWeightFile, RefusesADamagedHeaderATruncatedFileAndAForeignFile) {
  const std::string dir = test::make_temp_dir("wpw");
  const std::string path = dir + "/a.wpw";
  backends::write_prepared_weight_file(path, header_for(digest_text('a')), {{"w", pattern(8192, 1)}});
  const std::string damaged = dir + "/damaged.wpw";
  fs::copy_file(path, damaged);
  flip_byte(damaged, 30);  // inside the header JSON
  EXPECT_NE(test::error_of([&] { PreparedWeightFile::open(damaged); }).find("header fails its checksum"),
            std::string::npos);
  const std::string truncated = dir + "/truncated.wpw";
  fs::copy_file(path, truncated);
  fs::resize_file(truncated, 4096 + 100);
  EXPECT_NE(test::error_of([&] { PreparedWeightFile::open(truncated); }).find("lies outside the file"),
            std::string::npos);
  fs::resize_file(truncated, 20);
  EXPECT_NE(test::error_of([&] { PreparedWeightFile::open(truncated); }).find("no WEBSDPW1 magic"), std::string::npos);
  const std::string foreign = dir + "/foreign.wpw";
  std::ofstream(foreign) << "{\"not\": \"ours\"}";
  EXPECT_NE(test::error_of([&] { PreparedWeightFile::open(foreign); }).find("not a websd prepared-weight file"),
            std::string::npos);
}

PreparedWeightCache cache_in(const std::string& dir, std::uint64_t max_bytes, std::vector<std::string>* notices) {
  return PreparedWeightCache({dir, max_bytes, [notices](const std::string& line) { notices->push_back(line); }});
}

TEST(PreparedWeightCache, FindsAFileByDigestAndSignatureOnly) {
  std::vector<std::string> notices;
  PreparedWeightCache cache = cache_in(test::make_temp_dir("wpc"), 1ull << 30, &notices);
  const auto data = pattern(5000, 3);
  cache.store(header_for(digest_text('a')), {{"w", data}});
  EXPECT_NE(cache.open(digest_text('a'), "websd test; oneDNN test", false), nullptr);
  EXPECT_EQ(cache.open(digest_text('b'), "websd test; oneDNN test", false), nullptr);
  EXPECT_EQ(cache.open(digest_text('a'), "websd test; oneDNN other-isa", false), nullptr);
  EXPECT_TRUE(notices.empty());
  ASSERT_EQ(cache.list().size(), 1u);
  EXPECT_EQ(cache.list()[0].component, "unet");
  EXPECT_EQ(cache.list()[0].source, "/models/sd15");
}

TEST(PreparedWeightCache, RemovesADamagedFileInsteadOfUsingIt) {
  std::vector<std::string> notices;
  PreparedWeightCache cache = cache_in(test::make_temp_dir("wpc"), 1ull << 30, &notices);
  cache.store(header_for(digest_text('a')), {{"w", pattern(8192, 1)}});
  const std::string path = cache.list().at(0).path;
  flip_byte(path, fs::file_size(path) - 10);
  EXPECT_EQ(cache.open(digest_text('a'), "websd test; oneDNN test", false), nullptr);
  EXPECT_FALSE(fs::exists(path));
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("fails its checksum"), std::string::npos) << notices[0];
}

TEST(PreparedWeightCache, KeepsItsBoundByRemovingTheLeastRecentlyUsedFile) {
  std::vector<std::string> notices;
  const std::string dir = test::make_temp_dir("wpc");
  PreparedWeightCache cache = cache_in(dir, 2 * 20480 + 1000, &notices);  // room for two files of 20 KiB
  for (const char digit : {'a', 'b'}) cache.store(header_for(digest_text(digit)), {{"w", pattern(16000, 1)}});
  // 'a' is used again: 'b' becomes the least recently used.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_NE(cache.open(digest_text('a'), "websd test; oneDNN test", false), nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache.store(header_for(digest_text('c')), {{"w", pattern(16000, 2)}});
  EXPECT_NE(cache.open(digest_text('a'), "websd test; oneDNN test", false), nullptr);
  EXPECT_EQ(cache.open(digest_text('b'), "websd test; oneDNN test", false), nullptr);
  EXPECT_NE(cache.open(digest_text('c'), "websd test; oneDNN test", false), nullptr);
  std::uint64_t total = 0;
  for (const auto& file : cache.list()) total += file.bytes;
  EXPECT_LE(total, cache.max_bytes());
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("removed the least recently used"), std::string::npos) << notices[0];
}

TEST(PreparedWeightCache, DoesNotKeepAFileLargerThanItsBound) {
  std::vector<std::string> notices;
  PreparedWeightCache cache = cache_in(test::make_temp_dir("wpc"), 8192, &notices);
  cache.store(header_for(digest_text('a')), {{"w", pattern(16000, 1)}});
  EXPECT_TRUE(cache.list().empty());
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("bounded to"), std::string::npos) << notices[0];
}

TEST(PreparedWeightCache, SweepsTheTemporaryFilesOfWritersThatDied) {
  std::vector<std::string> notices;
  const std::string dir = test::make_temp_dir("wpc");
  PreparedWeightCache cache = cache_in(dir, 1ull << 30, &notices);
  fs::create_directories(dir);
  const std::string dead = dir + "/0123.wpw.tmp-999999999";  // no such process
  const std::string alive = dir + "/4567.wpw.tmp-" + std::to_string(::getpid());
  std::ofstream(dead) << "partial";
  std::ofstream(alive) << "partial";
  cache.store(header_for(digest_text('a')), {{"w", pattern(100, 1)}});
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_GT(cache.clear(), 100u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_TRUE(fs::exists(alive));  // a live writer's, also left by clear()
}

TEST(PreparedWeightCache, TheBoundComesFromTheEnvironment) {
  ASSERT_EQ(::setenv("WEBSD_WEIGHT_CACHE_MAX", "3G", 1), 0);
  EXPECT_EQ(PreparedWeightCache::default_max_bytes(), 3ull << 30);
  ASSERT_EQ(::setenv("WEBSD_WEIGHT_CACHE_MAX", "123456", 1), 0);
  EXPECT_EQ(PreparedWeightCache::default_max_bytes(), 123456u);
  ASSERT_EQ(::setenv("WEBSD_WEIGHT_CACHE_MAX", "lots", 1), 0);
  EXPECT_NE(test::error_of([] { PreparedWeightCache::default_max_bytes(); }).find("WEBSD_WEIGHT_CACHE_MAX='lots'"),
            std::string::npos);
  ASSERT_EQ(::setenv("WEBSD_WEIGHT_CACHE_MAX", "99999999999T", 1), 0);
  EXPECT_THROW(PreparedWeightCache::default_max_bytes(), Error);
  ASSERT_EQ(::unsetenv("WEBSD_WEIGHT_CACHE_MAX"), 0);
  EXPECT_EQ(PreparedWeightCache::default_max_bytes(), PreparedWeightCache::kDefaultMaxBytes);
}

TEST(ComponentDigest, FollowsTheContentNotTheFile) {
  const std::string dir = test::make_temp_dir("digest");
  RandomCheckpointOptions options;
  options.preset = "tiny";
  options.out_dir = dir + "/a";
  options.seed = 1;
  random_checkpoint_write(options, [](const std::string&) {});
  fs::copy(dir + "/a", dir + "/copy", fs::copy_options::recursive);
  options.out_dir = dir + "/b";
  options.seed = 2;
  random_checkpoint_write(options, [](const std::string&) {});
  const DiffusersCheckpoint a = DiffusersCheckpoint::open(dir + "/a");
  const DiffusersCheckpoint copy = DiffusersCheckpoint::open(dir + "/copy");
  const DiffusersCheckpoint b = DiffusersCheckpoint::open(dir + "/b");
  const std::string digest = backends::component_content_digest(a.component("unet"));
  EXPECT_EQ(digest.size(), 64u);
  EXPECT_EQ(backends::component_content_digest(copy.component("unet")), digest);
  EXPECT_NE(backends::component_content_digest(b.component("unet")), digest);
  EXPECT_NE(backends::component_content_digest(a.component("vae")), digest);
  // The identity is the files' (a copy is another file), and changes when the file is written.
  const std::string identity = backends::component_file_identity(a.component("unet"));
  EXPECT_NE(backends::component_file_identity(copy.component("unet")), identity);
  const std::string weights = dir + "/a/unet/diffusion_pytorch_model.safetensors";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    std::ofstream rewrite(weights, std::ios::in | std::ios::out | std::ios::binary);
    rewrite.seekp(static_cast<std::streamoff>(fs::file_size(weights) - 1));
    rewrite.put('\0');
  }
  EXPECT_NE(backends::component_file_identity(a.component("unet")), identity);
}

}  // namespace
}  // namespace websd
