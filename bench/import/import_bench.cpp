// websd_import_bench: how long opening a checkpoint takes, and what it costs in resident memory.
//   OpenTinySd15        DiffusersCheckpoint::open on the tiny-sd15 fixture (headers only)
//   OpenAndReadTinySd15 open + every float tensor read and upcast to float32
//   OpenSparseSd15Size  open of a synthetic folder with SD 1.5's tensor counts and float32 sizes
//                       (4.3 GB, written as sparse files so it costs no disk); the counter
//                       rss_growth_MiB shows that opening maps the weights without reading them.
// The fixtures folder is ../shared/fixtures from the project root, or $WEBSD_FIXTURES.
// Set WEBSD_KEEP_SPARSE_CHECKPOINT=1 to keep the sparse folder (its path is printed) and run
// `websd import --model <it> [--verify]` on it: the command prints its own time and peak RSS.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "import/diffusers_checkpoint.h"

namespace websd {
namespace {

std::string fixture_model_dir() {
  const char* overridden = std::getenv("WEBSD_FIXTURES");
  const std::string root = overridden != nullptr && *overridden != '\0' ? overridden : WEBSD_DEFAULT_FIXTURES;
  return root + "/tiny-sd15/model";
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// A safetensors file of `count` float32 tensors totalling about `parameters` elements whose data
// section is a hole: the header is real, the weights read as zeros and occupy no disk blocks.
void write_sparse_safetensors(const std::string& path, const std::string& prefix, std::size_t count,
                              std::uint64_t parameters) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  header["__metadata__"] = {{"format", "pt"}};
  const std::uint64_t per_tensor = parameters / count;
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string name = prefix + std::to_string(i / 32) + ".attentions." + std::to_string(i % 32) +
                             ".transformer_blocks.0.attn1.to_q.weight";
    header[name] = {{"dtype", "F32"}, {"shape", {per_tensor}}, {"data_offsets", {offset, offset + per_tensor * 4}}};
    offset += per_tensor * 4;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  {
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t length = text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((length >> (8 * i)) & 0xff));
    out << text;
  }
  std::filesystem::resize_file(path, 8 + text.size() + offset);
}

void write_json(const std::string& path, const nlohmann::json& value) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << value.dump();
}

// SD 1.5: UNet 686 tensors / 859.5M parameters, VAE 248 / 83.7M, CLIP text encoder 196 / 123.1M.
std::string write_sparse_sd15_folder() {
  std::string dir = (std::filesystem::temp_directory_path() / "websd-bench-sparse-sd15-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) throw Error("bench", "mkdtemp failed for " + dir);
  write_json(dir + "/model_index.json", {{"_class_name", "StableDiffusionPipeline"},
                                         {"text_encoder", {"transformers", "CLIPTextModel"}},
                                         {"unet", {"diffusers", "UNet2DConditionModel"}},
                                         {"vae", {"diffusers", "AutoencoderKL"}}});
  write_json(dir + "/text_encoder/config.json", {{"hidden_size", 768}});
  write_json(dir + "/unet/config.json", {{"_class_name", "UNet2DConditionModel"}});
  write_json(dir + "/vae/config.json", {{"_class_name", "AutoencoderKL"}});
  write_sparse_safetensors(dir + "/text_encoder/model.safetensors", "text_model.encoder.layers.", 196, 123'060'480);
  write_sparse_safetensors(dir + "/unet/diffusion_pytorch_model.safetensors", "down_blocks.", 686, 859'520'964);
  write_sparse_safetensors(dir + "/vae/diffusion_pytorch_model.safetensors", "decoder.up_blocks.", 248, 83'653'863);
  return dir;
}

void OpenTinySd15(benchmark::State& state) {
  const std::string dir = fixture_model_dir();
  std::size_t tensors = 0;
  for (auto _ : state) {
    const auto checkpoint = DiffusersCheckpoint::open(dir);
    tensors = checkpoint.component("unet").tensors().size();
    benchmark::DoNotOptimize(tensors);
  }
  state.counters["unet_tensors"] = static_cast<double>(tensors);
}

void OpenAndReadTinySd15(benchmark::State& state) {
  const std::string dir = fixture_model_dir();
  std::uint64_t values = 0;
  for (auto _ : state) {
    values = 0;
    const auto checkpoint = DiffusersCheckpoint::open(dir);
    for (const auto& component : checkpoint.components()) {
      for (const auto& [name, location] : component.tensors()) {
        if (!dtype_is_float(location.entry->dtype)) continue;
        const HostTensor tensor = component.read_f32(name);
        values += tensor.data.size();
        benchmark::DoNotOptimize(tensor.data.data());
      }
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * values * sizeof(float)));
  state.counters["values"] = static_cast<double>(values);
}

// Written once per process (the benchmark function runs several times) and removed at exit.
struct SparseFolder {
  std::string dir = write_sparse_sd15_folder();
  ~SparseFolder() {
    if (std::getenv("WEBSD_KEEP_SPARSE_CHECKPOINT") != nullptr) {
      std::cerr << "sparse SD 1.5-size checkpoint kept at " << dir << "\n";
    } else {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
};

void OpenSparseSd15Size(benchmark::State& state) {
  static const SparseFolder folder;
  double growth = 0;
  std::uint64_t parameters = 0;
  for (auto _ : state) {
    const std::uint64_t before = resident_bytes();
    const auto checkpoint = DiffusersCheckpoint::open(folder.dir);
    const std::uint64_t after = resident_bytes();
    growth = after > before ? static_cast<double>(after - before) : 0.0;
    parameters = 0;
    for (const auto& component : checkpoint.components()) parameters += component.stats().parameters;
  }
  state.counters["rss_growth_MiB"] = growth / (1024.0 * 1024.0);
  state.counters["parameters_M"] = static_cast<double>(parameters) / 1e6;
}

BENCHMARK(OpenTinySd15)->Unit(benchmark::kMillisecond);
BENCHMARK(OpenAndReadTinySd15)->Unit(benchmark::kMillisecond);
BENCHMARK(OpenSparseSd15Size)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace websd
