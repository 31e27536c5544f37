#include "backends/artifact_backend.h"

#include <algorithm>
#include <limits>
#include <map>
#include <span>

#include "artifact/artifact.h"
#include "artifact/image_sizes.h"
#include "backends/artifact_model.h"
#include "core/error.h"
#include "core/stopwatch.h"
#include "io/json_file.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"
#include "runtime/artifact_weight_source.h"
#include "runtime/executor.h"
#include "runtime/launch_list.h"
#include "targets/device_registry.h"

namespace websd::backends {
namespace {

constexpr const char* kSchedulerConfigPath = "model/scheduler/scheduler_config.json";

artifact::ArtifactOpenOptions open_options(const ArtifactAccess& access) {
  artifact::ArtifactOpenOptions options = artifact::ArtifactOpenOptions::for_targets(targets::device_target_names());
  options.key_file = access.key_file;
  options.trust_key_files = access.trust_key_files;
  return options;
}

}  // namespace

// A device tensor's storage here: one device buffer of its float32 values.
struct ArtifactBackend::HeldBuffer {
  runtime::BufferPtr buffer;
};

struct ArtifactBackend::State {
  artifact::Artifact artifact;
  Residency residency;
  ModelInfo info;
  std::int64_t width = 0, height = 0;             // the default size
  std::vector<artifact::ImageSize> sizes;         // every size it holds, the default first
  const targets::DeviceTarget& target;            // the artifact's: its memory checks
  std::unique_ptr<runtime::Device> owned_device;  // before the executors, which borrow it
  runtime::Device& device;
  runtime::BufferCache buffers{device};  // device tensors: uploads and function outputs
  runtime::ArtifactWeightSource weights{artifact};
  // One device copy of each weight while any executor holds it: unet, unet_b1 and unet_cfg share.
  runtime::DeviceWeightCache imported_weights;
  // Weights load_part imported ahead of their executors (the cache above holds none alive itself).
  std::vector<runtime::BufferPtr> loading;
  std::map<std::string, runtime::LaunchList> lists;
  std::map<std::string, std::unique_ptr<runtime::Executor>> executors;
  std::string active_network;
  runtime::OpProfile* profile = nullptr;
  runtime::LaunchProgress launch_progress;  // set_call_progress's; every executor borrows it
  runtime::WeightLoadTimes load_times;

  State(artifact::Artifact opened, Residency residency_policy, std::unique_ptr<runtime::Device> given,
        const std::string& tier)
      : artifact(std::move(opened)),
        residency(residency_policy),
        target(targets::device_target(artifact.target())),
        owned_device(given != nullptr ? std::move(given) : target.open()),
        device(*owned_device) {
    weights.set_release_shards(!device.limits().adopts_weight_bytes);
    const std::string& dir = artifact.dir();
    if (const nlohmann::json* needs = artifact.section("device_requirements");
        needs != nullptr && needs->is_object() && target.check_requirements) {
      target.check_requirements(*needs, dir);
    }
    const ArtifactModel model = read_artifact_model(artifact.section("model"), dir);
    info = model.info;
    width = model.width;
    height = model.height;
    sizes = model.sizes;

    const nlohmann::json* section = artifact.section("launch_lists");
    if (section == nullptr || !section->is_object())
      throw Error("artifact", dir + ": no launch_lists section (rebuild the artifact)");
    const nlohmann::json* tier_lists = tier_launch_lists(tier);
    for (const auto& [symbol, base_json] : in_preparing_order(*section)) {
      const nlohmann::json* json = base_json;
      if (tier_lists != nullptr) {
        const auto found = tier_lists->find(symbol);
        if (found == tier_lists->end())
          throw Error("artifact", dir + ": tier '" + tier + "' has no launch list for '" + symbol + "'");
        json = &*found;
      }
      runtime::LaunchList list = runtime::launch_list_from_json(*json);
      if (list.symbol != symbol)
        throw Error("artifact", dir + ": launch list '" + symbol + "' names itself '" + list.symbol + "'");
      // Before any call, for every function generate may call: every value dtype stored and every
      // buffer within this device's limits, every kernel runnable here (kernel files verified and
      // loaded). An f16 unet_cfg on a device that stores f32 fails now, not after the text encoder.
      runtime::check_fits_device(list, device);
      device.prepare(list, runtime::artifact_kernel_files(artifact));
      lists.emplace(symbol, std::move(list));
    }
  }

  // The launch lists, those a guided txt2img calls first: a device that compiles kernels in the
  // background (webgpu) has the first image's ready sooner, the others (clip_b1, unet, unet_b1,
  // vae_encode) following.
  static std::vector<std::pair<std::string, const nlohmann::json*>> in_preparing_order(const nlohmann::json& section) {
    std::vector<std::pair<std::string, const nlohmann::json*>> ordered;
    for (const auto& [symbol, json] : section.items()) ordered.emplace_back(symbol, &json);
    const auto first_image = [](const std::string& symbol) {
      const std::string_view role = artifact::symbol_role(symbol);
      return role == "clip" || role == "unet_cfg" || role.starts_with("vae_decode") || role == "image_to_rgba";
    };
    std::stable_partition(ordered.begin(), ordered.end(), [&](const auto& entry) { return first_image(entry.first); });
    return ordered;
  }

  // The launch lists of `tier` (section tier_launch_lists), or null for the base tier's (the first
  // of the tiers section, or an empty name). An unknown tier: websd::Error naming those it holds.
  const nlohmann::json* tier_launch_lists(const std::string& tier) const {
    if (tier.empty()) return nullptr;
    const nlohmann::json* tiers = artifact.section("tiers");
    std::string held;
    if (tiers != nullptr && tiers->is_array()) {
      for (std::size_t i = 0; i < tiers->size(); ++i) {
        const nlohmann::json& entry = (*tiers)[i];
        const std::string name = entry.is_object() && entry.contains("name") && entry["name"].is_string()
                                     ? entry["name"].get<std::string>()
                                     : "";
        if (name == tier) {
          if (i == 0) return nullptr;
          const nlohmann::json* lists = artifact.section("tier_launch_lists");
          if (lists == nullptr || !lists->is_object() || !lists->contains(tier) || !(*lists)[tier].is_object())
            throw Error("artifact",
                        artifact.dir() + ": tier '" + tier + "' has no launch lists (rebuild the artifact)");
          return &(*lists)[tier];
        }
        held += (held.empty() ? "" : ", ") + name;
      }
    }
    throw Error("artifact", artifact.dir() + ": has no kernel tier '" + tier + "'; it holds " +
                                (held.empty() ? "one lowering only (rebuild with websd build --tiers)" : held));
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
      buffers.clear();                  // sized for the dropped networks' tensors
      device.trim();                    // what the device kept for the dropped networks
      artifact.release_weight_pages();  // the mapped f32 weights of the networks just dropped
    }
    active_network = network;
  }

  runtime::Executor& executor(const std::string& symbol) {
    activate(symbol);
    if (const auto found = executors.find(symbol); found != executors.end()) return *found->second;
    // The network's weights are loaded already when another of its functions has an executor.
    const runtime::LaunchList& list = list_of(symbol);
    const bool loaded = std::any_of(executors.begin(), executors.end(),
                                    [&](const auto& held) { return network_of(held.first) == network_of(symbol); });
    if (target.require_memory) target.require_memory(list, !loaded, false);
    const Stopwatch made_time;
    auto made = std::make_unique<runtime::Executor>(device, list, runtime::artifact_kernel_files(artifact));
    load_times.executors_s += made_time.seconds();
    made->bind_weights(weights, &imported_weights, &load_times);
    weights.release_held();
    made->set_profile(profile);
    made->set_launch_progress(&launch_progress);
    return *executors.emplace(symbol, std::move(made)).first->second;
  }

  const runtime::LaunchList& list_of(const std::string& symbol) const {
    const auto list = lists.find(symbol);
    if (list == lists.end()) throw Error("artifact", artifact.dir() + ": has no function '" + symbol + "'");
    return list->second;
  }

  // The decoder functions: an artifact may hold decoders of several shapes (vae_decode for the
  // whole image, others for the tiles of a tiled decode).
  std::vector<std::pair<std::string, const Shape*>> decoders() const {
    std::vector<std::pair<std::string, const Shape*>> found;
    for (const auto& [symbol, list] : lists) {
      if (symbol.starts_with("vae_decode") && list.inputs.size() == 1) {
        found.emplace_back(symbol, &list.values[list.inputs[0]].type.shape);
      }
    }
    return found;
  }

  // "built for 128x128, 96x64 images".
  std::string built_for() const { return "built for " + artifact::image_sizes_text(sizes) + " images"; }

  // The decoder function whose input is `latents`; none: websd::Error naming the shapes it holds.
  std::string decoder_for(const Shape& latents) const {
    std::string held;
    for (const auto& [symbol, input] : decoders()) {
      if (*input == latents) return symbol;
      held += (held.empty() ? "" : ", ") + symbol + " " + shape_to_string(*input);
    }
    throw Error("artifact", artifact.dir() + ": has no VAE decoder for latents " + shape_to_string(latents) +
                                "; it holds " + (held.empty() ? "none" : held) + " (" + built_for() +
                                ": rebuild with websd build --size WxH, or, for a tiled decode, "
                                "choose a --vae-tile-size whose tiles it holds)");
  }

  // The function of `role` (artifact/image_sizes.h: one per image size) whose first input has
  // `shape` and whose other inputs have the shapes that follow; none: websd::Error naming what
  // does not fit and the sizes the artifact holds.
  std::string function_for(std::string_view role, const std::vector<Shape>& shapes, const std::string& what) const {
    const std::string* closest = nullptr;
    for (const auto& [symbol, list] : lists) {
      if (artifact::symbol_role(symbol) != role || list.inputs.empty()) continue;
      if (list.values[list.inputs[0]].type.shape != shapes.at(0)) {
        if (closest == nullptr) closest = &symbol;
        continue;
      }
      check_shapes(symbol, shapes, what);
      return symbol;
    }
    if (closest == nullptr) throw Error("artifact", artifact.dir() + ": has no function '" + std::string(role) + "'");
    check_shapes(*closest, shapes, what);  // throws: the first input differs
    return *closest;
  }

  // The functions a run calls, as encode_text, vae_encode, unet/unet_guided and vae_decode pick
  // them. The decoder first, right after plan_vae_decode asked vae_decode_fit about it (see
  // CheckpointBackend::check_memory).
  std::vector<std::string> run_functions(const RunShapes& run) const {
    const Shape image = run.latents.size() == 4 ? Shape{1, 3, run.latents[2] * info.vae_scale_factor,
                                                        run.latents[3] * info.vae_scale_factor}
                                                : Shape{};
    std::vector<std::string> symbols = {decoder_for(run.decode_tile.value_or(run.latents))};
    symbols.push_back(
        function_for(run.text_rows == 2 ? "clip" : "clip_b1", {{run.text_rows, run.tokens}}, "token ids"));
    if (run.init_image) symbols.push_back(function_for("vae_encode", {*run.init_image}, "image"));
    symbols.push_back(function_for(run.guided ? "unet_cfg" : "unet_b1", {run.latents}, "latents"));
    symbols.push_back(function_for("image_to_rgba", {image}, "image"));
    return symbols;
  }

  // The input types must be the ones the function was built for.
  void check_shapes(const std::string& symbol, const std::vector<Shape>& shapes, const std::string& what) const {
    const runtime::LaunchList& list = list_of(symbol);
    for (std::size_t i = 0; i < shapes.size() && i < list.inputs.size(); ++i) {
      const Shape& built = list.values[list.inputs[i]].type.shape;
      if (built != shapes[i]) {
        throw Error("artifact", artifact.dir() + ": " + built_for() + "; " + what + " " + shape_to_string(shapes[i]) +
                                    " does not fit " + symbol + "'s " + list.input_names[i] + " " +
                                    shape_to_string(built) + " (rebuild with websd build --size WxH)");
      }
    }
  }
};

ArtifactBackend::ArtifactBackend(const std::string& artifact_dir, const ArtifactAccess& access, Residency residency,
                                 std::unique_ptr<runtime::Device> device)
    : state_(std::make_unique<State>(artifact::Artifact::open(artifact_dir, open_options(access)), residency,
                                     std::move(device), access.tier)) {}

ArtifactBackend::ArtifactBackend(std::unique_ptr<artifact::ArtifactSource> source, const ArtifactAccess& access,
                                 Residency residency, std::unique_ptr<runtime::Device> device)
    : state_(std::make_unique<State>(artifact::Artifact::open(std::move(source), open_options(access)), residency,
                                     std::move(device), access.tier)) {}

ArtifactBackend::~ArtifactBackend() = default;

const ModelInfo& ArtifactBackend::info() const { return state_->info; }
std::int64_t ArtifactBackend::width() const { return state_->width; }
std::int64_t ArtifactBackend::height() const { return state_->height; }
const std::vector<artifact::ImageSize>& ArtifactBackend::sizes() const { return state_->sizes; }

ClipTokenizer ArtifactBackend::tokenizer() const {
  constexpr std::string_view kFolder = "model/tokenizer/";
  std::map<std::string, std::string> files;
  for (const std::string& path : state_->artifact.file_paths()) {
    if (!path.starts_with(kFolder) || path.find('/', kFolder.size()) != std::string::npos) continue;
    const std::vector<std::byte> bytes = state_->artifact.file_bytes(path);
    files.emplace(path.substr(kFolder.size()), std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  return ClipTokenizer(read_clip_tokenizer_spec_from_files(files, state_->artifact.dir() + "/model/tokenizer"));
}

nlohmann::json ArtifactBackend::scheduler_config() const {
  const std::vector<std::string> paths = state_->artifact.file_paths();
  if (std::find(paths.begin(), paths.end(), kSchedulerConfigPath) == paths.end()) return nullptr;
  const std::vector<std::byte> bytes = state_->artifact.file_bytes(kSchedulerConfigPath);
  return json_parse(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                    scheduler_config_origin());
}

std::string ArtifactBackend::scheduler_config_origin() const {
  return state_->artifact.dir() + "/" + kSchedulerConfigPath;
}

void ArtifactBackend::collect_profile() {
  for (auto& [symbol, executor] : state_->executors) executor->poll();
}

void ArtifactBackend::set_call_progress(CallProgress progress) { state_->launch_progress = std::move(progress); }

ArtifactBackend::LoadTimes ArtifactBackend::load_times() const {
  return {state_->artifact.shard_load_times(), state_->load_times};
}

void ArtifactBackend::set_profile(runtime::OpProfile* profile) {
  state_->profile = profile;
  for (auto& [symbol, executor] : state_->executors) executor->set_profile(profile);
}

void ArtifactBackend::check_memory(const RunShapes& run) {
  for (const std::string& symbol : state_->run_functions(run)) {
    const runtime::LaunchList& list = state_->list_of(symbol);
    if (state_->target.require_memory) state_->target.require_memory(list, true, true);
  }
  state_->device.trim();  // the plans the workspace estimates made; each network makes its own
}

void ArtifactBackend::load(const RunShapes& run) { load_part(run, std::numeric_limits<std::uint64_t>::max()); }

bool ArtifactBackend::load_part(const RunShapes& run, std::uint64_t bytes) {
  State& state = *state_;
  if (state.residency != Residency::kAllNetworks) return true;
  const std::vector<std::string> symbols = state.run_functions(run);
  std::uint64_t imported = 0;
  for (const std::string& symbol : symbols) {
    if (state.executors.contains(symbol)) continue;
    for (const runtime::LaunchWeight& weight : state.list_of(symbol).weights) {
      if (state.imported_weights.find(weight) != nullptr) continue;
      // At least one weight a part. The shard being imported stays held until the next part: its
      // next weights come then, and releasing it would read and check it again (SD 1.5 read 92
      // shards for 67, the re-reads on the main thread past the host's read-ahead).
      if (imported > 0 && imported >= bytes) return false;
      const std::uint64_t before = state.load_times.bytes;
      state.loading.push_back(runtime::import_weight(state.device, state.weights, weight, symbol, &state.load_times));
      state.imported_weights.remember(weight, state.loading.back());
      imported += state.load_times.bytes - before;
    }
  }
  // Every weight is on the device: the executors take them from imported_weights.
  for (const std::string& symbol : symbols) state.executor(symbol);
  state.loading.clear();
  return true;
}

DecodeFit ArtifactBackend::vae_decode_fit(const Shape& latents) {
  const auto decoders = state_->decoders();
  const auto decoder =
      std::find_if(decoders.begin(), decoders.end(), [&](const auto& held) { return *held.second == latents; });
  if (decoder == decoders.end()) return DecodeFit::kNoDecoder;
  const bool fits = !state_->target.memory_fits || state_->target.memory_fits(state_->list_of(decoder->first));
  state_->device.trim();  // the plans the workspace estimate made
  return fits ? DecodeFit::kFits : DecodeFit::kTooLarge;
}

namespace {

// Enqueues the download of the executor's output `output` after its last submit.
TensorDownload output_download(runtime::Executor& executor, std::size_t output) {
  auto host = std::make_shared<HostTensor>();
  executor.download_output(output, host);
  // The executor lives until the next call switches networks, after the caller waited (see header).
  return TensorDownload(
      [&executor, host] {
        executor.wait();
        return std::move(*host);
      },
      [&executor] { return executor.poll(); });
}

}  // namespace

TensorDownload ArtifactBackend::submit_encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) {
  if (batch < 1 || ids.size() % static_cast<std::size_t>(batch) != 0) {
    throw Error("engine",
                "encode_text: " + std::to_string(ids.size()) + " ids do not form " + std::to_string(batch) + " rows");
  }
  const Shape shape{batch, static_cast<std::int64_t>(ids.size()) / batch};
  const std::string symbol = state_->function_for(batch == 2 ? "clip" : "clip_b1", {shape}, "token ids");
  runtime::Executor& executor = state_->executor(symbol);
  executor.set_input(0, ids, shape);
  executor.submit();
  return output_download(executor, 0);
}

HostTensor ArtifactBackend::encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) {
  return submit_encode_text(ids, batch).wait();
}

const runtime::BufferPtr& ArtifactBackend::held(const DeviceTensor& tensor) const {
  return std::static_pointer_cast<const HeldBuffer>(tensor.storage_for(this))->buffer;
}

DeviceTensor ArtifactBackend::hold(Shape shape, runtime::BufferPtr buffer) const {
  return DeviceTensor(this, std::move(shape), std::make_shared<const HeldBuffer>(HeldBuffer{std::move(buffer)}));
}

DeviceTensor ArtifactBackend::upload(const HostTensor& tensor) {
  if (tensor.numel() != shape_numel(tensor.shape)) {
    throw Error("engine", "cannot upload a tensor of " + std::to_string(tensor.numel()) + " values as " +
                              shape_to_string(tensor.shape));
  }
  const std::span<const std::byte> bytes = std::as_bytes(std::span<const float>(tensor.data));
  runtime::BufferPtr buffer = state_->buffers.acquire(std::max<std::uint64_t>(bytes.size(), 4));
  state_->device.upload({buffer.get(), 0, bytes.size()}, bytes);
  return hold(tensor.shape, std::move(buffer));
}

TensorDownload ArtifactBackend::download(const DeviceTensor& tensor) {
  const runtime::BufferPtr& buffer = held(tensor);
  auto host = std::make_shared<HostTensor>(tensor.shape());
  const std::span<std::byte> bytes = std::as_writable_bytes(std::span<float>(host->data));
  state_->device.download({buffer.get(), 0, bytes.size()}, bytes);
  // Keeps the buffer alive until the copy completes; the device outlives the download (see header).
  return TensorDownload(
      [device = &state_->device, buffer, host] {
        device->wait();
        return std::move(*host);
      },
      [device = &state_->device] { return device->poll(); });
}

DeviceTensor ArtifactBackend::submit_for_output(runtime::Executor& executor) {
  executor.submit();
  const runtime::LaunchList& list = executor.launch_list();
  return hold(list.values[list.outputs.at(0)].type.shape, executor.copy_output(0, state_->buffers));
}

DeviceTensor ArtifactBackend::unet(const DeviceTensor& sample, double timestep, const DeviceTensor& context) {
  const std::int64_t batch = sample.shape().empty() ? 0 : sample.shape()[0];
  const std::string symbol =
      state_->function_for(batch == 2 ? "unet" : "unet_b1", {sample.shape(), {batch}, context.shape()}, "UNet sample");
  runtime::Executor& executor = state_->executor(symbol);
  executor.set_input(0, held(sample));
  executor.set_input(
      1, HostTensor({batch}, std::vector<float>(static_cast<std::size_t>(batch), static_cast<float>(timestep))));
  executor.set_input(2, held(context));
  return submit_for_output(executor);
}

DeviceTensor ArtifactBackend::unet_guided(const DeviceTensor& sample, double timestep, const DeviceTensor& context,
                                          double guidance_scale) {
  runtime::Executor& executor =
      state_->executor(state_->function_for("unet_cfg", {sample.shape(), {1}, context.shape(), {1}}, "UNet sample"));
  executor.set_input(0, held(sample));
  executor.set_input(1, HostTensor({1}, {static_cast<float>(timestep)}));
  executor.set_input(2, held(context));
  executor.set_input(3, HostTensor({1}, {static_cast<float>(guidance_scale)}));
  return submit_for_output(executor);
}

DeviceTensor ArtifactBackend::vae_decode(const DeviceTensor& latents) {
  runtime::Executor& executor = state_->executor(state_->decoder_for(latents.shape()));
  executor.set_input(0, held(latents));
  return submit_for_output(executor);
}

DeviceTensor ArtifactBackend::image_to_rgba(const DeviceTensor& image) {
  runtime::Executor& executor = state_->executor(state_->function_for("image_to_rgba", {image.shape()}, "image"));
  executor.set_input(0, held(image));
  return submit_for_output(executor);
}

std::pair<TensorDownload, TensorDownload> ArtifactBackend::submit_vae_encode(const HostTensor& image) {
  runtime::Executor& executor = state_->executor(state_->function_for("vae_encode", {image.shape}, "image"));
  executor.set_input(0, image);
  executor.submit();
  return {output_download(executor, 0), output_download(executor, 1)};
}

std::pair<HostTensor, HostTensor> ArtifactBackend::vae_encode(const HostTensor& image) {
  auto [mean, logvar] = submit_vae_encode(image);
  HostTensor waited = mean.wait();
  return {std::move(waited), logvar.wait()};
}

std::vector<std::string> ArtifactBackend::function_names() const {
  std::vector<std::string> names;
  for (const auto& [symbol, list] : state_->lists) names.push_back(symbol);
  return names;
}

double ArtifactBackend::run_function_once(const std::string& symbol) {
  const Stopwatch run_time;
  submit_function_once(symbol);
  finish_function(symbol);
  return run_time.seconds();
}

void ArtifactBackend::submit_function_once(const std::string& symbol) {
  runtime::Executor& executor = state_->executor(symbol);
  runtime::set_sample_inputs(executor);
  executor.submit();
}

void ArtifactBackend::finish_function(const std::string& symbol) { state_->executor(symbol).wait(); }

}  // namespace websd::backends
