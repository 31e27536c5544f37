#include "fuzz_entries.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "artifact/artifact_json.h"
#include "artifact/artifact_manifest.h"
#include "artifact/weight_index.h"
#include "core/dtype.h"
#include "io/safetensors_reader.h"
#include "ops/op_registry.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"
#include "runtime/executor.h"
#include "runtime/launch_list.h"
#include "targets/cpu/runtime/cpu_device.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_conv.h"

namespace websd::fuzz {
namespace {

namespace fs = std::filesystem;

void expect(bool holds, const std::string& what) {
  if (!holds) throw FuzzInvariantError(what);
}

std::string_view as_text(FuzzInput data) { return {reinterpret_cast<const char*>(data.data()), data.size()}; }

// The input as an anonymous in-memory file (memfd): SafetensorsFile maps a path, and this keeps
// millions of executions off the disk. The file disappears with its descriptor.
class MemoryFile {
 public:
  explicit MemoryFile(FuzzInput data) : fd_(::memfd_create("websd-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
    for (std::size_t written = 0; written < data.size();) {
      const ssize_t count = ::write(fd_, data.data() + written, data.size() - written);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) {
        const int saved = errno;
        ::close(fd_);
        throw std::system_error(saved, std::generic_category(), "write to memfd");
      }
      written += static_cast<std::size_t>(count);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

bool same_bits(const void* a, const void* b, std::size_t bytes) { return bytes == 0 || std::memcmp(a, b, bytes) == 0; }

void read_entry(const SafetensorsFile& file, const SafetensorsEntry& entry) {
  const std::string name = safetensors_quote_name(entry.name);
  expect(file.find(entry.name) == &entry, "find(" + name + ") does not return its own entry");
  const std::span<const std::byte> raw = file.bytes(entry);
  expect(raw.size() == entry.numel() * dtype_size(entry.dtype), name + ": byte span disagrees with shape x dtype");
  if (dtype_is_float(entry.dtype)) {
    const HostTensor tensor = file.read_f32(entry.name);
    expect(tensor.data.size() == entry.numel(), name + ": read_f32 returned the wrong element count");
    if (entry.dtype == DType::kF32) {
      expect(same_bits(tensor.data.data(), raw.data(), raw.size()), name + ": F32 data did not come back bit-exact");
    }
    // The second half again through the streaming API: it must agree with the whole read.
    const std::uint64_t half = entry.numel() / 2;
    std::vector<float> tail(entry.numel() - half);
    file.read_f32_slice(entry, half, tail);
    expect(same_bits(tail.data(), tensor.data.data() + half, tail.size() * sizeof(float)),
           name + ": read_f32_slice disagrees with read_f32");
  } else if (entry.dtype != DType::kBool) {
    expect(file.read_i64(entry.name).size() == entry.numel(), name + ": read_i64 returned the wrong element count");
  }
  file.release_pages(entry);
}

// One folder per process, emptied before each input and removed at exit.
class ScratchFolder {
 public:
  ScratchFolder() : path_(fs::temp_directory_path() / ("websd-fuzz-tokenizer-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const fs::path& path() const { return path_; }

  void clear() const {
    for (const char* name :
         {"tokenizer.json", "vocab.json", "merges.txt", "special_tokens_map.json", "tokenizer_config.json"}) {
      fs::remove(path_ / name);
    }
  }

  void write(const char* name, std::string_view content) const {
    std::ofstream out(path_ / name, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) throw std::runtime_error("cannot write " + (path_ / name).string());
  }

 private:
  fs::path path_;
};

// `count` parts separated by NUL bytes; the last part takes the rest, missing parts are empty.
std::vector<std::string_view> split_parts(std::string_view text, std::size_t count) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < count) {
    const std::size_t nul = text.find('\0');
    if (nul == std::string_view::npos) break;
    parts.push_back(text.substr(0, nul));
    text.remove_prefix(nul + 1);
  }
  parts.push_back(text);
  parts.resize(count);
  return parts;
}

void check_encodings(const ClipTokenizer& tokenizer, std::string_view prompt) {
  const std::vector<TokenId> unpadded = tokenizer.encode_unpadded(prompt);
  expect(unpadded.size() >= 2 && unpadded.front() == tokenizer.bos_id() && unpadded.back() == tokenizer.eos_id(),
         "encode_unpadded does not start with BOS and end with EOS");
  const auto max_length = static_cast<std::size_t>(tokenizer.max_length());
  std::vector<TokenId> expected(unpadded.begin(), unpadded.begin() + std::min(unpadded.size(), max_length));
  if (unpadded.size() > max_length) expected.back() = tokenizer.eos_id();
  expected.resize(max_length, tokenizer.pad_id());
  expect(tokenizer.encode(prompt) == expected, "encode is not encode_unpadded truncated to max_length and padded");
  // encode() was answered from the BPE word cache; a cold run must agree with it.
  tokenizer.clear_cache();
  expect(tokenizer.encode_unpadded(prompt) == unpadded, "a cold BPE run disagrees with the cached one");
}

constexpr const char* kManifestOrigin = "fuzz/manifest.json";
constexpr const char* kIndexOrigin = "fuzz/weights/index.json";

// Parses text a writer produced: a rejection there is the writer's or the reader's bug.
template <typename Parse>
auto parse_written(Parse parse, const std::string& text, const char* what) {
  try {
    return parse(text);
  } catch (const Error& error) {
    throw FuzzInvariantError(std::string(what) + " wrote text its parser rejects: " + error.what());
  }
}

void check_manifest_round_trip(std::string_view text) {
  using namespace artifact;
  const std::string written = manifest_to_text(parse_manifest(text, kManifestOrigin));
  const auto reparse = [](const std::string& again) { return parse_manifest(again, kManifestOrigin); };
  const std::string rewritten = manifest_to_text(parse_written(reparse, written, "manifest_to_text"));
  expect(written == rewritten, "manifest_to_text(parse_manifest(text)) is not a fixed point");
}

void check_weight_index_round_trip(std::string_view text) {
  using namespace artifact;
  const std::string written = weight_index_to_text(parse_weight_index(text, kIndexOrigin));
  const auto reparse = [](const std::string& again) { return parse_weight_index(again, kIndexOrigin); };
  const std::string rewritten = weight_index_to_text(parse_written(reparse, written, "weight_index_to_text"));
  expect(written == rewritten, "weight_index_to_text(parse_weight_index(text)) is not a fixed point");
}

}  // namespace

void fuzz_safetensors(FuzzInput data) {
  const MemoryFile memory_file(data);
  const SafetensorsFile file(memory_file.path());
  for (const SafetensorsEntry& entry : file.entries()) read_entry(file, entry);
}

void fuzz_tokenizer(FuzzInput data) {
  static const ScratchFolder folder;
  if (data.empty()) return;
  const bool json_layout = data[0] == 'j';
  const std::vector<std::string_view> parts = split_parts(as_text(data.subspan(1)), 4);
  folder.clear();
  if (json_layout) {
    folder.write("tokenizer.json", parts[0]);
    if (!parts[1].empty()) folder.write("special_tokens_map.json", parts[1]);
  } else {
    folder.write("vocab.json", parts[0]);
    folder.write("merges.txt", parts[1]);
  }
  if (!parts[2].empty()) folder.write("tokenizer_config.json", parts[2]);
  check_encodings(load_clip_tokenizer(folder.path().string()), parts[3]);
}

void fuzz_artifact_manifest(FuzzInput data) {
  const std::string_view text = as_text(data);
  bool manifest_accepted = false;
  try {
    check_manifest_round_trip(text);
    manifest_accepted = true;
  } catch (const Error&) {
    // Rejected as a manifest, as most inputs are; the index parser still gets the same bytes.
  }
  try {
    check_weight_index_round_trip(text);
  } catch (const Error&) {
    if (!manifest_accepted) throw;  // rejected by both: report it as the clean rejection it is
  }
}

void fuzz_launch_list(FuzzInput data) {
  const artifact::JsonFieldReader reader("launch list", "fuzz input");
  const nlohmann::json json = reader.parse(as_text(data));
  const runtime::LaunchList list = runtime::launch_list_from_json(json);
  const nlohmann::json written = runtime::launch_list_to_json(list);
  const nlohmann::json again = runtime::launch_list_to_json(runtime::launch_list_from_json(written));
  if (written != again) throw FuzzInvariantError("an accepted launch list does not survive writing and reading");
}

namespace {

constexpr std::uint64_t kMaxExecArenaBytes = 64ull << 20;
constexpr std::uint64_t kMaxExecTensorBytes = 16ull << 20;
constexpr std::size_t kMaxExecLaunches = 4096;

// Deterministic weights of the size their kernels read: row-major ones exactly their type, packed
// convolution weights as large as this CPU's packing of their convolution.
class SyntheticWeights final : public runtime::WeightSource {
 public:
  explicit SyntheticWeights(const runtime::LaunchList& list) : list_(list) {}

  runtime::WeightBytes read(const runtime::LaunchWeight& weight) override {
    std::uint64_t count = static_cast<std::uint64_t>(weight.type.numel());
    if (!weight.layout.empty()) count = std::max<std::uint64_t>(count, packed_floats(weight));
    if (count * sizeof(float) > kMaxExecTensorBytes) throw Error("fuzz", "weight beyond the harness's small shapes");
    auto values = std::make_shared<std::vector<float>>(count);
    for (std::size_t i = 0; i < values->size(); ++i) (*values)[i] = 0.02f * static_cast<float>(i % 101) - 1.0f;
    return {std::as_bytes(std::span<const float>(*values)), DType::kF32, values};
  }

 private:
  std::uint64_t packed_floats(const runtime::LaunchWeight& weight) const {
    std::uint64_t most = 0;
    for (const runtime::Launch& launch : list_.launches) {
      const std::vector<std::int32_t> reads = launch.reads();
      if (list_.kernel_of(launch).entry != "conv2d_nhwc" || reads.size() < 2 || launch.writes().size() != 1) continue;
      const runtime::LaunchValue& value = list_.values[reads[1]];
      if (value.placement != runtime::Placement::kWeight || list_.weights[value.index].name != weight.name) continue;
      std::vector<const TensorType*> types;
      for (const auto id : reads) types.push_back(&list_.values[id].type);
      try {
        most = std::max(most, cpu::conv_packed_weight_bytes(cpu::conv2d_nhwc_geometry(
                                  types, launch.attrs, list_.values[launch.writes()[0]].type)) /
                                  sizeof(float));
      } catch (const Error&) {
        // A convolution the device will refuse at load anyway.
      }
    }
    return most;
  }

  const runtime::LaunchList& list_;
};

// Packed convolution weights in the layout this CPU's kernels want: a list (a seed, a learned input)
// written on a CPU with other vector units names that CPU's packing, which the device would refuse
// before running anything, as it refuses an artifact built elsewhere.
void adopt_this_cpus_conv_layouts(runtime::LaunchList& list) {
  for (const runtime::Launch& launch : list.launches) {
    const std::vector<std::int32_t> reads = launch.reads();
    if (list.kernel_of(launch).entry != "conv2d_nhwc" || reads.size() < 2 || launch.writes().size() != 1) continue;
    const runtime::LaunchValue& value = list.values[reads[1]];
    if (value.placement != runtime::Placement::kWeight) continue;
    runtime::LaunchWeight& weight = list.weights[static_cast<std::size_t>(value.index)];
    if (weight.layout.empty()) continue;
    std::vector<const TensorType*> types;
    std::vector<TensorType> inputs;
    for (const auto id : reads) {
      types.push_back(&list.values[id].type);
      inputs.push_back(list.values[id].type);
    }
    const TensorType& output = list.values[launch.writes()[0]].type;
    try {
      // Only a convolution the device's load checks accept (the op's own type inference, checked
      // before it asks for a layout): a mutated one may have operands of any rank.
      const ops::OpDef& op = ops::op_lookup("conv2d_nhwc");
      const int count = static_cast<int>(inputs.size());
      if (count < op.min_inputs || count > op.max_inputs || op.infer(inputs, launch.attrs) != std::vector{output}) continue;
      weight.layout = cpu::conv_weight_layout(cpu::conv2d_nhwc_geometry(types, launch.attrs, output));
    } catch (const Error&) {
      // A convolution the device will refuse at load anyway.
    }
  }
}

bool within_small_shapes(const runtime::LaunchList& list) {
  if (list.launches.size() > kMaxExecLaunches) return false;
  if (static_cast<std::uint64_t>(list.memory.total_bytes()) > kMaxExecArenaBytes) return false;
  for (const auto id : list.inputs) {
    if (runtime::value_bytes(list.values[id].type) > kMaxExecTensorBytes) return false;
  }
  for (const auto& weight : list.weights) {
    if (runtime::value_bytes(weight.type) > kMaxExecTensorBytes) return false;
  }
  return true;
}

}  // namespace

void fuzz_launch_list_exec(FuzzInput data) {
  const artifact::JsonFieldReader reader("launch list", "fuzz input");
  runtime::LaunchList list = runtime::launch_list_from_json(reader.parse(as_text(data)));
  if (!within_small_shapes(list)) return;
  adopt_this_cpus_conv_layouts(list);
  for (runtime::Kernel& kernel : list.kernels) {
    if (kernel.source != "file") continue;
    kernel.source = "builtin";
    kernel.entry = "fused_elementwise";
  }
  cpu::CpuDevice device;
  runtime::Executor executor(device, std::move(list));
  SyntheticWeights weights(executor.launch_list());
  executor.bind_weights(weights);
  const runtime::LaunchList& bound = executor.launch_list();
  runtime::set_sample_inputs(executor);
  executor.submit();
  for (std::size_t o = 0; o < bound.outputs.size(); ++o) {
    if (bound.values[bound.outputs[o]].type.dtype == DType::kF32) executor.read_output(o);
  }
  executor.wait();
}

}  // namespace websd::fuzz
