#include "engine/artifact_backend.h"

#include <malloc.h>

#include <chrono>
#include <map>

#include "artifact/artifact.h"
#include "core/error.h"
#include "cpu/arena_executor.h"
#include "cpu/kernel_library.h"
#include "cpu/onednn_conv.h"
#include "runtime/launch_list.h"

namespace websd::engine {
namespace {

constexpr const char* kKernelLibraryPath = "kernels/cpu_kernels.so";

std::int64_t model_int(const nlohmann::json& model, const char* key) {
  const auto it = model.find(key);
  if (it == model.end() || !it->is_number_integer()) {
    throw Error("artifact", std::string("the model section lacks integer '") + key + "' (rebuild the artifact)");
  }
  return it->get<std::int64_t>();
}

}  // namespace

struct ArtifactBackend::State {
  artifact::Artifact artifact;
  Residency residency;
  ModelInfo info;
  std::int64_t width = 0, height = 0;
  std::optional<cpu::KernelLibrary> library;
  std::map<std::string, runtime::LaunchList> lists;
  std::map<std::string, std::unique_ptr<cpu::ArenaExecutor>> executors;
  std::string active_network;
  cpu::OpProfile* profile = nullptr;

  State(const std::string& dir, std::optional<std::string> key_file, Residency residency_policy)
      : artifact(artifact::Artifact::open(dir, {"cpu", std::move(key_file), false})), residency(residency_policy) {
    const nlohmann::json* model = artifact.section("model");
    if (model == nullptr || !model->is_object())
      throw Error("artifact", dir + ": no model section (rebuild the artifact)");
    info.latent_channels = model_int(*model, "latent_channels");
    info.vae_scale_factor = model_int(*model, "vae_scale_factor");
    const auto scaling = model->find("vae_scaling_factor");
    if (scaling == model->end() || !scaling->is_number())
      throw Error("artifact", dir + ": the model section lacks vae_scaling_factor");
    info.vae_scaling_factor = scaling->get<double>();
    info.max_tokens = model_int(*model, "max_tokens");
    info.sample_height = model_int(*model, "sample_height");
    info.sample_width = model_int(*model, "sample_width");
    info.latent_size_multiple = model_int(*model, "latent_size_multiple");
    const auto name = model->find("name");
    info.name = name != model->end() && name->is_string() ? name->get<std::string>() : "artifact";
    width = model_int(*model, "width");
    height = model_int(*model, "height");

    const nlohmann::json* section = artifact.section("launch_lists");
    if (section == nullptr || !section->is_object())
      throw Error("artifact", dir + ": no launch_lists section (rebuild the artifact)");
    for (const auto& [symbol, json] : section->items()) {
      runtime::LaunchList list = runtime::launch_list_from_json(json);
      if (list.symbol != symbol)
        throw Error("artifact", dir + ": launch list '" + symbol + "' names itself '" + list.symbol + "'");
      lists.emplace(symbol, std::move(list));
    }
    const nlohmann::json* kernels = artifact.section("kernels");
    if (kernels != nullptr && kernels->is_array() && !kernels->empty()) {
      library.emplace(cpu::KernelLibrary::open(artifact.file_path(kKernelLibraryPath)));
    }
  }

  static std::string network_of(const std::string& symbol) {
    if (symbol.rfind("clip", 0) == 0) return "text";
    if (symbol.rfind("unet", 0) == 0) return "unet";
    return "vae";
  }

  // Under Residency::kOneNetwork, drops the executors (arenas, widened weights) of the other networks.
  void activate(const std::string& symbol) {
    const std::string network = network_of(symbol);
    if (residency != Residency::kOneNetwork || network == active_network) return;
    bool released = false;
    for (auto it = executors.begin(); it != executors.end();) {
      if (network_of(it->first) != network) {
        it = executors.erase(it);
        released = true;
      } else {
        ++it;
      }
    }
    if (released) {
      cpu::conv_release_caches();  // the dropped networks' convolution primitives and scratch
      malloc_trim(0);
      artifact.release_weight_pages();  // the mapped f32 weights of the networks just dropped
    }
    active_network = network;
  }

  cpu::ArenaExecutor& executor(const std::string& symbol) {
    activate(symbol);
    if (const auto found = executors.find(symbol); found != executors.end()) return *found->second;
    const auto list = lists.find(symbol);
    if (list == lists.end()) throw Error("artifact", artifact.dir() + ": has no function '" + symbol + "'");
    auto made = std::make_unique<cpu::ArenaExecutor>(list->second, library ? &*library : nullptr);
    made->bind_weights([this](const runtime::LaunchWeight& weight) {
      const artifact::WeightEntry* entry = artifact.find_weight(weight.name);
      if (entry == nullptr)
        throw Error("artifact",
                    artifact.dir() + ": the launch lists name weight '" + weight.name + "' which the index lacks");
      const std::span<const std::byte> bytes = artifact.weight(weight.name);
      const DType dtype = entry->dtype;
      // A packed weight may be padded, never smaller; a row-major one is exactly its type.
      const auto logical = static_cast<std::uint64_t>(weight.type.numel()) * dtype_size(dtype);
      if (weight.layout.empty() ? bytes.size() != logical : bytes.size() < logical) {
        throw Error("artifact", artifact.dir() + ": weight '" + weight.name + "' holds " +
                                    std::to_string(bytes.size()) + " bytes, its launch list wants " +
                                    weight.type.to_string() + " (edited or corrupt: rebuild the artifact)");
      }
      if (dtype == DType::kF32) {
        // In place: the shard is mapped (or decrypted) for as long as the artifact is open.
        return cpu::CpuTensor::view(weight.type, const_cast<std::byte*>(bytes.data()));
      }
      const std::size_t count = bytes.size() / dtype_size(dtype);
      auto widened = std::make_shared<std::vector<float>>(count);
      convert_to_f32(bytes.data(), dtype, count, widened->data());
      return cpu::CpuTensor{weight.type, std::move(widened), nullptr};
    });
    made->set_profile(profile);
    return *executors.emplace(symbol, std::move(made)).first->second;
  }

  const runtime::LaunchList& list_of(const std::string& symbol) const {
    const auto list = lists.find(symbol);
    if (list == lists.end()) throw Error("artifact", artifact.dir() + ": has no function '" + symbol + "'");
    return list->second;
  }

  // The input types must be the ones the function was built for.
  void check_shapes(const std::string& symbol, const std::vector<Shape>& shapes, const std::string& what) const {
    const runtime::LaunchList& list = list_of(symbol);
    for (std::size_t i = 0; i < shapes.size() && i < list.inputs.size(); ++i) {
      const Shape& built = list.values[list.inputs[i]].type.shape;
      if (built != shapes[i]) {
        throw Error("artifact", artifact.dir() + ": built for " + std::to_string(width) + "x" + std::to_string(height) +
                                    " images; " + what + " " + shape_to_string(shapes[i]) + " does not fit " + symbol +
                                    "'s " + list.input_names[i] + " " + shape_to_string(built) +
                                    " (rebuild with websd build --width W --height H)");
      }
    }
  }
};

ArtifactBackend::ArtifactBackend(const std::string& artifact_dir, std::optional<std::string> key_file,
                                 Residency residency)
    : state_(std::make_unique<State>(artifact_dir, std::move(key_file), residency)) {}

ArtifactBackend::~ArtifactBackend() = default;

const ModelInfo& ArtifactBackend::info() const { return state_->info; }
std::int64_t ArtifactBackend::width() const { return state_->width; }
std::int64_t ArtifactBackend::height() const { return state_->height; }

std::string ArtifactBackend::model_files_dir() const {
  const nlohmann::json* files = state_->artifact.section(artifact::kFilesSection);
  if (files != nullptr && files->is_array()) {
    for (const auto& file : *files) {
      const std::string path = file.value("path", "");
      if (path.rfind("model/", 0) == 0) state_->artifact.file_path(path);  // verifies it
    }
  }
  return state_->artifact.dir() + "/model";
}

void ArtifactBackend::set_profile(cpu::OpProfile* profile) {
  state_->profile = profile;
  for (auto& [symbol, executor] : state_->executors) executor->set_profile(profile);
}

HostTensor ArtifactBackend::encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) {
  if (batch < 1 || ids.size() % static_cast<std::size_t>(batch) != 0) {
    throw Error("engine",
                "encode_text: " + std::to_string(ids.size()) + " ids do not form " + std::to_string(batch) + " rows");
  }
  const std::string symbol = batch == 2 ? "clip" : "clip_b1";
  const Shape shape{batch, static_cast<std::int64_t>(ids.size()) / batch};
  state_->check_shapes(symbol, {shape}, "token ids");
  cpu::CpuTensor input{TensorType{DType::kI64, shape}, nullptr,
                       std::make_shared<std::vector<std::int64_t>>(ids)};
  return state_->executor(symbol).run({input}).at(0).to_host();
}

HostTensor ArtifactBackend::unet(const HostTensor& sample, double timestep, const HostTensor& context) {
  const std::int64_t batch = sample.shape.empty() ? 0 : sample.shape[0];
  const std::string symbol = batch == 2 ? "unet" : "unet_b1";
  state_->check_shapes(symbol, {sample.shape, {batch}, context.shape}, "UNet sample");
  HostTensor timesteps({batch}, std::vector<float>(static_cast<std::size_t>(batch), static_cast<float>(timestep)));
  return state_->executor(symbol)
      .run(
          {cpu::CpuTensor::from_host(sample), cpu::CpuTensor::from_host(timesteps), cpu::CpuTensor::from_host(context)})
      .at(0)
      .to_host();
}

HostTensor ArtifactBackend::vae_decode(const HostTensor& latents) {
  state_->check_shapes("vae_decode", {latents.shape}, "latents");
  return state_->executor("vae_decode").run({cpu::CpuTensor::from_host(latents)}).at(0).to_host();
}

std::pair<HostTensor, HostTensor> ArtifactBackend::vae_encode(const HostTensor& image) {
  state_->check_shapes("vae_encode", {image.shape}, "image");
  const std::vector<cpu::CpuTensor> outputs = state_->executor("vae_encode").run({cpu::CpuTensor::from_host(image)});
  return {outputs.at(0).to_host(), outputs.at(1).to_host()};
}

std::vector<std::string> ArtifactBackend::function_names() const {
  std::vector<std::string> names;
  for (const auto& [symbol, list] : state_->lists) names.push_back(symbol);
  return names;
}

double ArtifactBackend::run_function_once(const std::string& symbol) {
  const runtime::LaunchList& list = state_->list_of(symbol);
  std::vector<cpu::CpuTensor> inputs;
  for (const auto id : list.inputs) {
    cpu::CpuTensor input = cpu::CpuTensor::allocate(list.values[id].type);
    if (dtype_is_float(input.type.dtype)) {
      for (std::int64_t i = 0; i < input.numel(); ++i) input.fdata()[i] = 0.01f * static_cast<float>(i % 197) - 0.9f;
    } else {
      // Byte-level token ids: every CLIP vocabulary has them.
      for (std::int64_t i = 0; i < input.numel(); ++i) (*input.i64)[static_cast<std::size_t>(i)] = i % 256;
    }
    inputs.push_back(std::move(input));
  }
  cpu::ArenaExecutor& executor = state_->executor(symbol);
  const auto start = std::chrono::steady_clock::now();
  executor.run(inputs);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace websd::engine
