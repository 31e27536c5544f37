// The prepared-weight cache as a user meets it: `generate --model` fills it, a second run reuses it
// and writes the same image, `websd cache list` shows it, `websd cache clear` empties it,
// `--no-weight-cache` leaves it alone, and a malformed bound is one clear error.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

using test::read_bytes;

std::vector<std::string> generate_args(const std::string& out) {
  return {"generate", "--model",      test::fixture_path("tiny-sd15/model"),
          "--prompt", "a lighthouse", "--steps",
          "2",        "--width",      "64",
          "--height", "64",           "--seed",
          "3",        "--out",        out};
}

std::size_t cache_files(const std::string& dir) {
  std::size_t count = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) count += entry.path().extension() == ".wpw";
  return count;
}

TEST(CacheCli, GenerateFillsTheCacheAndASecondRunWritesTheSameImage) {
  const std::string dir = test::make_temp_dir("cache-cli");
  ASSERT_EQ(::setenv("XDG_CACHE_HOME", (dir + "/xdg").c_str(), 1), 0);  // inherited by the child
  const std::string cache = dir + "/xdg/websd/prepared-weights";
  const auto first = test::run_websd(generate_args(dir + "/first.png"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(cache_files(cache), 3u);
  const auto second = test::run_websd(generate_args(dir + "/second.png"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find("prepared-weight cache"), std::string::npos) << second.err;  // nothing to report
  EXPECT_EQ(read_bytes(dir + "/first.png"), read_bytes(dir + "/second.png"));

  const auto listed = test::run_websd({"cache", "list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(cache + ": 3 files"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("unet of " + test::fixture_path("tiny-sd15/model")), std::string::npos) << listed.out;

  const auto cleared = test::run_websd({"cache", "clear"});
  ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cleared.out.find("removed"), std::string::npos) << cleared.out;
  EXPECT_EQ(cache_files(cache), 0u);
  EXPECT_NE(test::run_websd({"cache", "list"}).out.find(": 0 files"), std::string::npos);
}

// Issue 34: a path is bytes; JSON (the cache file's header) holds UTF-8. Before, the cache's writer
// thread aborted the process (exit 134) on the model folder's name.
TEST(CacheCli, AModelFolderWhoseNameIsNotUtf8IsCachedAndListed) {
  const std::string dir = test::make_temp_dir("cache-cli");
  ASSERT_EQ(::setenv("XDG_CACHE_HOME", (dir + "/xdg").c_str(), 1), 0);
  const std::string model = dir + "/m\xff\xfe";
  fs::copy(test::fixture_path("tiny-sd15/model"), model, fs::copy_options::recursive);
  std::vector<std::string> args = generate_args(dir + "/out.png");
  args.at(2) = model;
  const auto result = test::run_websd(args);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(cache_files(dir + "/xdg/websd/prepared-weights"), 3u);
  const auto listed = test::run_websd({"cache", "list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("unet of " + dir + "/m\\xFF\\xFE"), std::string::npos) << listed.out;
  const auto bench =
      test::run_websd({"bench", "--model", model, "--width", "64", "--height", "64", "--runs", "1", "--json"});
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_NE(bench.out.find("m\\\\xFF\\\\xFE"), std::string::npos) << bench.out;  // JSON escapes the backslash
}

// Issue 34: the cache's identity records are opened under the input rule like every other file;
// before, FIFOs in their place made generate block for ever.
TEST(CacheCli, IdentityRecordsThatAreNotFilesAreReplacedNotWaitedOn) {
  const std::string dir = test::make_temp_dir("cache-cli");
  ASSERT_EQ(::setenv("XDG_CACHE_HOME", (dir + "/xdg").c_str(), 1), 0);
  ASSERT_EQ(test::run_websd(generate_args(dir + "/first.png")).exit_code, 0);
  const std::string identities = dir + "/xdg/websd/prepared-weights/identities";
  std::vector<std::string> records;
  for (const auto& entry : fs::directory_iterator(identities)) records.push_back(entry.path().string());
  ASSERT_EQ(records.size(), 3u);
  for (const std::string& record : records) {
    fs::remove(record);
    ASSERT_EQ(::mkfifo(record.c_str(), 0600), 0);
  }
  const auto second = test::run_websd(generate_args(dir + "/second.png"), "", std::chrono::seconds(120));
  ASSERT_FALSE(second.timed_out);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("is a FIFO"), std::string::npos) << second.err;
  EXPECT_EQ(read_bytes(dir + "/first.png"), read_bytes(dir + "/second.png"));
  for (const std::string& record : records) EXPECT_TRUE(fs::is_regular_file(record)) << record;
}

TEST(CacheCli, NoWeightCacheKeepsNothing) {
  const std::string dir = test::make_temp_dir("cache-cli");
  ASSERT_EQ(::setenv("XDG_CACHE_HOME", (dir + "/xdg").c_str(), 1), 0);
  std::vector<std::string> args = generate_args(dir + "/out.png");
  args.push_back("--no-weight-cache");
  const auto result = test::run_websd(args);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(dir + "/xdg/websd/prepared-weights"));
}

TEST(CacheCli, AMalformedBoundIsOneClearError) {
  const std::string dir = test::make_temp_dir("cache-cli");
  ASSERT_EQ(::setenv("XDG_CACHE_HOME", (dir + "/xdg").c_str(), 1), 0);
  ASSERT_EQ(::setenv("WEBSD_WEIGHT_CACHE_MAX", "plenty", 1), 0);
  const auto result = test::run_websd(generate_args(dir + "/out.png"));
  ASSERT_EQ(::unsetenv("WEBSD_WEIGHT_CACHE_MAX"), 0);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("WEBSD_WEIGHT_CACHE_MAX='plenty' is not a size"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir + "/out.png"));
}

TEST(CacheCli, WithoutAHomeFolderGenerateRunsWithoutTheCache) {
  const std::string dir = test::make_temp_dir("cache-cli");
  const std::string home = std::getenv("HOME") != nullptr ? std::getenv("HOME") : "";
  ASSERT_EQ(::unsetenv("XDG_CACHE_HOME"), 0);
  ASSERT_EQ(::unsetenv("HOME"), 0);
  const auto result = test::run_websd(generate_args(dir + "/out.png"));
  if (!home.empty()) {
    ASSERT_EQ(::setenv("HOME", home.c_str(), 1), 0);
  }
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("running without the prepared-weight cache: no place for the prepared-weight cache: "
                            "neither XDG_CACHE_HOME nor HOME is set"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(fs::exists(dir + "/out.png"));
}

}  // namespace
}  // namespace websd
