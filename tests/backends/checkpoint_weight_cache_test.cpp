// CheckpointBackend with the prepared-weight cache, as `websd generate --model` runs it: the first
// backend prepares and writes the weights, a second one maps them (none prepared) and computes the
// same bits as a backend without the cache; a copy of the checkpoint finds them by content; a
// checkpoint rewritten with other weights does not; a damaged file is removed and rebuilt.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/checkpoint_backend.h"
#include "models/random_checkpoint.h"
#include "pipeline/host_calls.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

struct Outputs {
  HostTensor text, unet, image;
};

std::shared_ptr<backends::PreparedWeightCache> cache_in(const std::string& dir, std::vector<std::string>* notices) {
  return std::make_shared<backends::PreparedWeightCache>(backends::PreparedWeightCacheOptions{
      dir, 1ull << 30, [notices](const std::string& line) { notices->push_back(line); }});
}

// One call of each network, as a run makes them (the text encoder first, which starts the prefetch).
Outputs run_networks(backends::CheckpointBackend& backend) {
  RunShapes run;
  run.guided = true;
  run.text_rows = 2;
  run.tokens = 77;
  run.latents = {1, 4, 8, 8};
  backend.check_memory(run);
  std::vector<std::int64_t> ids(2 * 77, 49407);
  ids[0] = ids[77] = 49406;
  ids[1] = 320;
  Outputs out;
  out.text = backend.encode_text(ids, 2);
  HostTensor sample({2, 4, 8, 8});
  for (std::size_t i = 0; i < sample.data.size(); ++i) sample.data[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
  out.unet = call_unet(backend, sample, 500, out.text);
  out.image = call_vae_decode(backend, HostTensor({1, 4, 8, 8}, std::vector<float>(256, 0.25f)));
  return out;
}

void expect_same_bits(const Outputs& a, const Outputs& b) {
  EXPECT_EQ(a.text.data, b.text.data);
  EXPECT_EQ(a.unet.data, b.unet.data);
  EXPECT_EQ(a.image.data, b.image.data);
}

std::string write_model(const std::string& dir, std::uint64_t seed) {
  RandomCheckpointOptions options;
  options.preset = "tiny";
  options.out_dir = dir;
  options.seed = seed;
  options.force = true;
  random_checkpoint_write(options, [](const std::string&) {});
  return dir;
}

std::size_t wpw_files(const std::string& dir) {
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) count += entry.path().extension() == ".wpw";
  return count;
}

TEST(CheckpointWeightCache, ASecondRunMapsThePreparedWeightsAndComputesTheSameBits) {
  const std::string dir = test::make_temp_dir("weight-cache");
  const std::string model = write_model(dir + "/model", 1);
  std::vector<std::string> notices;
  Outputs uncached;
  {
    backends::CheckpointBackend backend(model);
    uncached = run_networks(backend);
  }
  {
    backends::CheckpointBackend backend(model);
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    expect_same_bits(run_networks(backend), uncached);
    EXPECT_FALSE(backend.weight_cache_hit("unet"));
  }  // the writes finish before the backend is gone
  EXPECT_EQ(wpw_files(dir + "/cache"), 3u);
  {
    backends::CheckpointBackend backend(model);
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    const Outputs cached = run_networks(backend);
    expect_same_bits(cached, uncached);
    EXPECT_TRUE(backend.weight_cache_hit("vae"));  // the network called last stays loaded
    EXPECT_EQ(backend.loaded_weight_count(), 0u);  // nothing was prepared from the checkpoint
  }
  EXPECT_TRUE(notices.empty()) << notices.front();
}

TEST(CheckpointWeightCache, ACopyFindsTheWeightsByContentAndOtherWeightsDoNot) {
  const std::string dir = test::make_temp_dir("weight-cache");
  const std::string model = write_model(dir + "/model", 1);
  std::vector<std::string> notices;
  {
    backends::CheckpointBackend backend(model);
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    run_networks(backend);
  }
  fs::copy(model, dir + "/copy", fs::copy_options::recursive);
  {
    backends::CheckpointBackend backend(dir + "/copy");
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    run_networks(backend);
    EXPECT_EQ(backend.loaded_weight_count(), 0u);
  }
  EXPECT_EQ(wpw_files(dir + "/cache"), 3u);
  // The same folder rewritten with other weights: the old files are stale for it.
  write_model(model, 2);
  Outputs uncached;
  {
    backends::CheckpointBackend backend(model);
    uncached = run_networks(backend);
  }
  {
    backends::CheckpointBackend backend(model);
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    expect_same_bits(run_networks(backend), uncached);
    EXPECT_GT(backend.loaded_weight_count(), 0u);  // prepared from the checkpoint
  }
  EXPECT_EQ(wpw_files(dir + "/cache"), 6u);
  EXPECT_TRUE(notices.empty()) << notices.front();
}

TEST(CheckpointWeightCache, ADamagedFileIsRemovedAndRebuiltNeverUsed) {
  const std::string dir = test::make_temp_dir("weight-cache");
  const std::string model = write_model(dir + "/model", 1);
  std::vector<std::string> notices;
  Outputs first;
  {
    backends::CheckpointBackend backend(model);
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    first = run_networks(backend);
  }
  // Damage one weight of every file (its first entry, as the header places it).
  for (const auto& entry : fs::directory_iterator(dir + "/cache")) {
    if (entry.path().extension() != ".wpw") continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    std::array<unsigned char, 16> prefix{};
    file.read(reinterpret_cast<char*>(prefix.data()), prefix.size());
    std::uint64_t header_bytes = 0;
    for (int i = 15; i >= 8; --i) header_bytes = (header_bytes << 8) | prefix[i];
    std::string text(header_bytes, '\0');
    file.seekg(24);
    file.read(text.data(), static_cast<std::streamsize>(text.size()));
    const nlohmann::json first = nlohmann::json::parse(text)["entries"][0];
    file.seekp(first["offset"].get<std::streamoff>() + first["bytes"].get<std::streamoff>() / 2);
    file.put('\x5a');
    file.put('\xa5');
  }
  {
    backends::CheckpointBackend backend(model);
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    expect_same_bits(run_networks(backend), first);
    EXPECT_GT(backend.loaded_weight_count(), 0u);
  }
  EXPECT_EQ(notices.size(), 3u);
  for (const std::string& line : notices) EXPECT_NE(line.find("removed"), std::string::npos) << line;
  notices.clear();
  {
    backends::CheckpointBackend backend(model);
    backend.use_weight_cache(cache_in(dir + "/cache", &notices));
    expect_same_bits(run_networks(backend), first);
    EXPECT_EQ(backend.loaded_weight_count(), 0u);  // rebuilt by the run before
  }
  EXPECT_TRUE(notices.empty()) << notices.front();
}

}  // namespace
}  // namespace websd
