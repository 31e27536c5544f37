// CheckpointBackend with the prepared-weight cache, as `websd generate --model` runs it: the first
// backend prepares and writes the weights, a second one maps them (none prepared) and computes the
// same bits as a backend without the cache; a copy of the checkpoint finds them by content; a
// checkpoint rewritten with other weights does not; a damaged file is removed and rebuilt; bf16
// weights are cached as bf16.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/checkpoint_backend.h"
#include "core/error.h"
#include "models/random_checkpoint.h"
#include "pipeline/host_calls.h"
#include "support/fixtures.h"
#include "targets/cpu/runtime/bf16_support.h"

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

std::uintmax_t wpw_bytes(const std::string& dir) {
  std::uintmax_t bytes = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".wpw") bytes += entry.file_size();
  }
  return bytes;
}

// Every network run once on a fresh backend, with the prepared-weight cache in `cache_dir` (none
// when empty): the outputs, and how many weights the run prepared from the checkpoint. The
// backend is gone when it returns, so its cache writes have finished.
struct BackendRun {
  Outputs outputs;
  std::size_t prepared = 0;
};

BackendRun run_backend(const std::string& model, const std::string& cache_dir, std::vector<std::string>* notices,
                       DType compute = DType::kF32) {
  backends::CheckpointBackend backend(model);
  backend.compute_in(compute);
  if (!cache_dir.empty()) backend.use_weight_cache(cache_in(cache_dir, notices));
  BackendRun run;
  run.outputs = run_networks(backend);
  run.prepared = backend.loaded_weight_count();  // the network called last stays loaded (the VAE)
  return run;
}

TEST(CheckpointWeightCache, ASecondRunMapsThePreparedWeightsAndComputesTheSameBits) {
  const std::string dir = test::make_temp_dir("weight-cache");
  const std::string model = write_model(dir + "/model", 1);
  std::vector<std::string> notices;
  const Outputs uncached = run_backend(model, "", &notices).outputs;
  const BackendRun first = run_backend(model, dir + "/cache", &notices);
  expect_same_bits(first.outputs, uncached);
  EXPECT_GT(first.prepared, 0u);
  EXPECT_EQ(wpw_files(dir + "/cache"), 3u);
  const BackendRun second = run_backend(model, dir + "/cache", &notices);
  expect_same_bits(second.outputs, uncached);
  EXPECT_EQ(second.prepared, 0u);  // every weight came from the cache
  EXPECT_TRUE(notices.empty()) << notices.front();
}

// --dtype bf16: the weights bf16 kernels read are cached as the bf16 bytes the device holds (the
// files smaller than f32's), mapped by a second run, which computes the same bits. A CPU without
// native bf16 refuses the backend's first call instead.
TEST(CheckpointWeightCache, Bf16WeightsAreCachedAsBf16AndMappedOnASecondRun) {
  const std::string dir = test::make_temp_dir("weight-cache-bf16");
  const std::string model = write_model(dir + "/model", 1);
  std::vector<std::string> notices;
  if (!cpu::onednn_bf16_available()) {
    try {
      run_backend(model, dir + "/cache", &notices, DType::kBF16);
      FAIL() << "a bf16 backend ran on a CPU without native bf16";
    } catch (const Error& error) {
      EXPECT_NE(error.message().find("no native bf16 (AVX512-BF16 or AMX)"), std::string::npos) << error.message();
    }
    return;
  }
  const Outputs uncached = run_backend(model, "", &notices, DType::kBF16).outputs;
  const BackendRun first = run_backend(model, dir + "/cache", &notices, DType::kBF16);
  expect_same_bits(first.outputs, uncached);
  EXPECT_GT(first.prepared, 0u);
  const BackendRun second = run_backend(model, dir + "/cache", &notices, DType::kBF16);
  expect_same_bits(second.outputs, uncached);
  EXPECT_EQ(second.prepared, 0u);  // every weight came from the cache
  run_backend(model, dir + "/f32-cache", &notices);
  EXPECT_LT(wpw_bytes(dir + "/cache"), wpw_bytes(dir + "/f32-cache") * 3 / 4);
  EXPECT_TRUE(notices.empty()) << notices.front();
}

TEST(CheckpointWeightCache, ACopyFindsTheWeightsByContentAndOtherWeightsDoNot) {
  const std::string dir = test::make_temp_dir("weight-cache");
  const std::string model = write_model(dir + "/model", 1);
  std::vector<std::string> notices;
  run_backend(model, dir + "/cache", &notices);
  fs::copy(model, dir + "/copy", fs::copy_options::recursive);
  EXPECT_EQ(run_backend(dir + "/copy", dir + "/cache", &notices).prepared, 0u);
  EXPECT_EQ(wpw_files(dir + "/cache"), 3u);
  // The same folder rewritten with other weights: the old files are stale for it.
  write_model(model, 2);
  const Outputs uncached = run_backend(model, "", &notices).outputs;
  const BackendRun rewritten = run_backend(model, dir + "/cache", &notices);
  expect_same_bits(rewritten.outputs, uncached);
  EXPECT_GT(rewritten.prepared, 0u);
  EXPECT_EQ(wpw_files(dir + "/cache"), 6u);
  EXPECT_TRUE(notices.empty()) << notices.front();
}

TEST(CheckpointWeightCache, ADamagedFileIsRemovedAndRebuiltNeverUsed) {
  const std::string dir = test::make_temp_dir("weight-cache");
  const std::string model = write_model(dir + "/model", 1);
  std::vector<std::string> notices;
  const Outputs first = run_backend(model, dir + "/cache", &notices).outputs;
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
    const nlohmann::json placed = nlohmann::json::parse(text)["entries"][0];
    file.seekp(placed["offset"].get<std::streamoff>() + placed["bytes"].get<std::streamoff>() / 2);
    file.put('\x5a');
    file.put('\xa5');
  }
  const BackendRun damaged = run_backend(model, dir + "/cache", &notices);
  expect_same_bits(damaged.outputs, first);
  EXPECT_GT(damaged.prepared, 0u);
  EXPECT_EQ(notices.size(), 3u);
  for (const std::string& line : notices) EXPECT_NE(line.find("removed"), std::string::npos) << line;
  notices.clear();
  const BackendRun rebuilt = run_backend(model, dir + "/cache", &notices);
  expect_same_bits(rebuilt.outputs, first);
  EXPECT_EQ(rebuilt.prepared, 0u);  // the damaged run wrote the files again
  EXPECT_TRUE(notices.empty()) << notices.front();
}

}  // namespace
}  // namespace websd
