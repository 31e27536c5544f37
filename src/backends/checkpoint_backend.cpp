#include "backends/checkpoint_backend.h"

#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "app/version.h"
#include "backends/cached_network_weights.h"
#include "compiler/checkpoint_model.h"
#include "compiler/component_weights.h"
#include "compiler/target.h"
#include "core/dtype.h"
#include "core/error.h"
#include "graph/op_registry.h"
#include "import/diffusers_checkpoint.h"
#include "models/graphs/sd_graphs.h"
#include "models/model_params.h"
#include "passes/launch_lowering.h"
#include "passes/memory_plan.h"
#include "passes/pass_pipeline.h"
#include "passes/weight_recipe.h"
#include "runtime/executor.h"
#include "targets/cpu/codegen/cpu_target.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/cpu_memory_check.h"
#include "targets/cpu/runtime/onednn_conv.h"
#include "targets/cpu/runtime/vector_math.h"
#include "targets/device_registry.h"

namespace websd::backends {
namespace {

using Key = std::vector<std::int64_t>;

// The key of a prepared weight in the prepared-weight cache: everything that decides its bytes
// besides the checkpoint's content and the cache file's signature.
std::string prepared_weight_key(const passes::WeightRecipe& recipe,
                                const std::optional<compiler::WeightLayout>& layout) {
  std::string key = std::string(passes::weight_recipe_kind_name(recipe.kind)) + ":" + recipe.name + "<";
  for (std::size_t i = 0; i < recipe.sources.size(); ++i) key += (i ? "," : "") + recipe.sources[i].name;
  return key + ">" + shape_to_string(recipe.type.shape) + "@" + (layout ? layout->name : "row-major");
}

// Weights a bf16 kernel reads, or a kernel holding its weight in f16, narrowed once and shared by
// the executors of one network, by key (which names the type).
using HeldHalfWeights = std::map<std::string, std::shared_ptr<const std::vector<std::uint16_t>>>;

std::shared_ptr<const std::vector<std::uint16_t>> narrowed_to(DType dtype, const std::vector<float>& values) {
  auto narrowed = std::make_shared<std::vector<std::uint16_t>>(values.size());
  // The CPU kernels' vectorised narrowing: the cold start narrows every UNet weight here.
  const auto count = static_cast<std::int64_t>(values.size());
  if (dtype == DType::kBF16) {
    cpu::narrow_to_bf16(values.data(), narrowed->data(), count);
  } else {
    cpu::narrow_to_f16(values.data(), narrowed->data(), count);
  }
  return narrowed;
}

// The weights of one compiled function for runtime::Executor: the component's float32 tensors,
// made by the pass list's recipes (merged projections) and packed as the function's convolutions
// want, shared with every other executor of the network; those a bf16 kernel reads, or a kernel
// holding its weight in f16, are narrowed to bf16 or f16 once and held only so (half the memory;
// the device uses them in place). Taken from the
// prepared-weight cache when it holds them, and handed to it when they had to be made.
class ComponentWeightSource final : public runtime::WeightSource {
 public:
  struct Weight {
    passes::WeightRecipe recipe;
    std::optional<compiler::WeightLayout> packing;
  };

  ComponentWeightSource(compiler::ComponentWeights& weights, HeldHalfWeights& held_half, CachedNetworkWeights* cached,
                        std::string symbol, std::map<std::string, Weight> made)
      : weights_(weights), held_half_(held_half), cached_(cached), symbol_(std::move(symbol)), made_(std::move(made)) {}

  runtime::WeightBytes read(const runtime::LaunchWeight& weight) override {
    const Weight& made = made_.at(weight.name);
    const compiler::WeightLayout* packing = made.packing ? &*made.packing : nullptr;
    const bool bf16 = packing != nullptr && cpu::weight_layout_holds_bf16(packing->name);
    const bool f16 = packing != nullptr && cpu::weight_layout_holds_f16(packing->name);
    const DType dtype = bf16 ? DType::kBF16 : f16 ? DType::kF16 : DType::kF32;
    // The stored type is part of the key: files of earlier versions cached bf16 layouts as f32.
    const std::string key = prepared_weight_key(made.recipe, made.packing) + (bf16 ? " as bf16" : f16 ? " as f16" : "");
    if (dtype != DType::kF32) {
      if (const auto held = held_half_.find(key); held != held_half_.end()) return bytes_of(held->second, dtype);
    }
    const std::uint64_t row_major_bytes = static_cast<std::uint64_t>(made.recipe.type.numel()) * dtype_size(dtype);
    if (cached_) {
      // A packed weight's size follows from its layout, which is part of the key: at least the
      // row-major size (the executor's own rule), padded as the layout pads.
      std::optional<runtime::WeightBytes> hit = cached_->find(key, dtype);
      if (hit && (packing ? hit->bytes.size() >= row_major_bytes : hit->bytes.size() == row_major_bytes)) {
        return std::move(*hit);
      }
    }
    std::shared_ptr<std::vector<float>> values = weights_.get(symbol_, made.recipe, packing);
    runtime::WeightBytes bytes{std::as_bytes(std::span<const float>(*values)), DType::kF32, values};
    if (dtype != DType::kF32) {
      const auto narrowed = held_half_.emplace(key, narrowed_to(dtype, *values)).first->second;
      weights_.forget(made.recipe, packing);
      bytes = bytes_of(narrowed, dtype);
    }
    if (cached_) cached_->add_prepared(key, bytes);
    return bytes;
  }

 private:
  static runtime::WeightBytes bytes_of(const std::shared_ptr<const std::vector<std::uint16_t>>& bits, DType dtype) {
    return {std::as_bytes(std::span<const std::uint16_t>(*bits)), dtype, bits};
  }

  compiler::ComponentWeights& weights_;
  HeldHalfWeights& held_half_;
  CachedNetworkWeights* cached_;
  std::string symbol_;
  std::map<std::string, Weight> made_;
};

// One network's executors, by input shape, all bound to the same component weights. Each runs its
// function compiled by the cpu target's pass list (as in an artifact: DCE, constant folding,
// channels-last, fusions, merged projections, tuning), memory-planned and lowered to a launch list,
// on runtime::Executor over the CPU device: intermediates live in planned arenas, as in an artifact.
// The compiled lists are kept when the executors are released: a network called again, or checked
// before its first call (check_memory), is compiled once.
struct ExecutorCache {
  struct Compiled {
    runtime::LaunchList list;
    std::map<std::string, ComponentWeightSource::Weight> made;
  };

  compiler::ComponentWeights* weights = nullptr;
  HeldHalfWeights held_half;               // the weights held as bf16 or f16 (see ComponentWeightSource)
  CachedNetworkWeights* cached = nullptr;  // the prepared-weight cache, when the backend uses one
  DType compute = DType::kF32;             // what convolutions, linear layers and attention compute in
  runtime::Device* device = nullptr;
  std::map<Key, Compiled> compiled;
  std::map<Key, std::unique_ptr<runtime::Executor>> executors;
  runtime::OpProfile* profile = nullptr;
  const runtime::LaunchProgress* launch_progress = nullptr;  // the backend's, for every executor
  const tuning::TuningDb* tuning_db = nullptr;
  std::map<Key, TuningCoverage> coverage;

  void set_profile(runtime::OpProfile* into) {
    profile = into;
    for (auto& [key, executor] : executors) executor->set_profile(into);
  }

  const Compiled& compile(const Key& key, const std::function<graph::Function()>& build) {
    if (const auto found = compiled.find(key); found != compiled.end()) return found->second;
    // The cpu target's own pass list, as `websd build` runs it; its fused elementwise groups run
    // on the runtime's interpreting kernel instead of a generated library.
    std::vector<passes::WeightRecipe> recipes;
    compiler::PassListHooks hooks;
    hooks.tuning_db = tuning_db;
    hooks.compute = compute;
    hooks.on_recipes = [&](const std::string&, const std::vector<passes::WeightRecipe>& made) {
      recipes.insert(recipes.end(), made.begin(), made.end());
    };
    hooks.on_tuning = [&](std::size_t tuned, std::size_t tunable) { coverage[key] = {tuned, tunable}; };
    const graph::Function function = passes::run_pipeline(build(), compiler::cpu_target().pass_list(hooks)).function;
    std::vector<runtime::LaunchWeight> placements;
    Compiled result;
    const std::vector<passes::WeightRecipe> all_recipes = passes::weight_recipes_for(function, recipes);
    for (std::size_t w = 0; w < function.weights().size(); ++w) {
      const graph::ValueId id = function.weights()[w];
      const graph::Value& value = function.value(id);
      std::optional<compiler::WeightLayout> packing = compiler::cpu_target().weight_layout(function, id);
      placements.push_back({value.name, packing ? packing->name : "", value.type});
      result.made.emplace(value.name, ComponentWeightSource::Weight{all_recipes[w], std::move(packing)});
    }
    result.list = passes::lower_to_launch_list(function, passes::plan_memory(function), std::move(placements));
    return compiled.emplace(key, std::move(result)).first->second;
  }

  // What running the function for `key` needs now: its weights too, unless the network has them
  // loaded (prepared, or mapped from the prepared-weight cache by an executor).
  cpu::MemoryNeed need(const Key& key, const std::function<graph::Function()>& build) {
    const bool weights_held = weights->loaded_count() > 0 || !executors.empty();
    return cpu::cpu_memory_need(compile(key, build).list, !weights_held);
  }

  // Refuses the function for `key` when it does not fit in the memory available now (`when`: see
  // cpu::MemoryCheckTime).
  void check(const Key& key, const std::function<graph::Function()>& build, cpu::MemoryCheckTime when) {
    cpu::require_memory(compile(key, build).list, need(key, build), when);
  }

  runtime::Executor& get(const Key& key, const std::function<graph::Function()>& build) {
    if (const auto found = executors.find(key); found != executors.end()) return *found->second;
    check(key, build, cpu::MemoryCheckTime::kAtLoad);
    const Compiled& function = compiled.at(key);
    auto executor = std::make_unique<runtime::Executor>(*device, function.list);
    ComponentWeightSource source(*weights, held_half, cached, function.list.symbol, function.made);
    executor->bind_weights(source);
    if (cached) cached->write_behind();
    executor->set_profile(profile);
    executor->set_launch_progress(launch_progress);
    return *executors.emplace(key, std::move(executor)).first->second;
  }
};

void require_rank(const HostTensor& tensor, std::size_t rank, const char* what, const char* layout) {
  if (tensor.shape.size() != rank || tensor.numel() != shape_numel(tensor.shape)) {
    throw Error("engine", std::string(what) + " has shape " + shape_to_string(tensor.shape) + ", expected " + layout);
  }
}

}  // namespace

struct CheckpointBackend::State {
  enum class Network { kText, kUNet, kVae };

  Residency residency;
  std::optional<tuning::TuningDb> tuning_db;
  std::shared_ptr<const DiffusersCheckpoint> checkpoint;
  ClipTextConfig clip;
  UNetConfig unet;
  VaeConfig vae;
  ModelInfo info;
  std::unique_ptr<compiler::ComponentWeights> clip_weights, unet_weights, vae_weights;
  // The prepared-weight cache of each network, when the backend uses one (use_weight_cache), and
  // the thread that looks the first networks of a run up in it while the run starts.
  std::unique_ptr<CachedNetworkWeights> clip_cached, unet_cached, vae_cached;
  std::thread prefetcher;
  // The networks are compiled for the cpu target: its registered device. Declared before the
  // executors, which borrow it.
  std::unique_ptr<runtime::Device> device = targets::open_device(compiler::cpu_target().name());
  runtime::LaunchProgress launch_progress;  // set_call_progress's; the executors borrow it too
  ExecutorCache clip_executors, unet_executors, decode_executors, encode_executors;

  State(std::shared_ptr<const DiffusersCheckpoint> opened, Residency residency_policy, const tuning::TuningDb* db)
      : residency(residency_policy),
        tuning_db(db != nullptr ? std::optional<tuning::TuningDb>(*db) : std::nullopt),
        checkpoint(std::move(opened)) {
    compiler::CheckpointModel model = compiler::read_checkpoint_model(*checkpoint);
    clip = model.clip;
    unet = model.unet;
    vae = model.vae;
    info = model.info;
    clip_weights = std::make_unique<compiler::ComponentWeights>(checkpoint->component("text_encoder"),
                                                                param_specs(clip_text_params(clip)));
    unet_weights =
        std::make_unique<compiler::ComponentWeights>(checkpoint->component("unet"), param_specs(unet_params(unet)));
    vae_weights =
        std::make_unique<compiler::ComponentWeights>(checkpoint->component("vae"), param_specs(vae_params(vae)));
    clip_executors.weights = clip_weights.get();
    unet_executors.weights = unet_weights.get();
    decode_executors.weights = vae_weights.get();
    encode_executors.weights = vae_weights.get();
    for (ExecutorCache* cache : caches()) {
      cache->tuning_db = tuning_db ? &*tuning_db : nullptr;
      cache->device = device.get();
      cache->launch_progress = &launch_progress;
    }
  }

  ~State() {
    if (prefetcher.joinable()) prefetcher.join();
  }

  void use_weight_cache(std::shared_ptr<PreparedWeightCache> cache) {
    // Everything besides the checkpoint's content that decides the prepared bytes.
    const std::string signature = "websd " + std::string(kVersion) + "; " + cpu::conv_packing_identity();
    clip_cached = std::make_unique<CachedNetworkWeights>(cache, checkpoint->component("text_encoder"), signature);
    unet_cached = std::make_unique<CachedNetworkWeights>(cache, checkpoint->component("unet"), signature);
    vae_cached = std::make_unique<CachedNetworkWeights>(cache, checkpoint->component("vae"), signature);
    clip_executors.cached = clip_cached.get();
    unet_executors.cached = unet_cached.get();
    decode_executors.cached = vae_cached.get();
    encode_executors.cached = vae_cached.get();
  }

  // Looks up the text encoder and the network after it in the cache in the background, once: the
  // digests, the files and their verification overlap with compiling and encoding the prompt.
  void prefetch(bool image_first) {
    if (!clip_cached || prefetcher.joinable()) return;
    CachedNetworkWeights* next = image_first ? vae_cached.get() : unet_cached.get();
    prefetcher = std::thread([clip = clip_cached.get(), next] {
      clip->resolve();
      next->resolve();
    });
  }

  std::array<ExecutorCache*, 4> caches() {
    return {&clip_executors, &unet_executors, &decode_executors, &encode_executors};
  }

  // Under Residency::kOneNetwork, releases every network but `network` before it runs, and lets the
  // device give back what it kept for them (Device::trim).
  void activate(Network network) {
    if (residency != Residency::kOneNetwork) return;
    bool released = false;
    const auto release = [&](Network which, compiler::ComponentWeights& weights, CachedNetworkWeights* cached,
                             std::initializer_list<ExecutorCache*> caches) {
      if (which == network) return;
      bool held = weights.loaded_count() > 0;
      for (ExecutorCache* cache : caches) held = held || !cache->executors.empty() || !cache->held_half.empty();
      if (!held) return;
      for (ExecutorCache* cache : caches) {
        cache->executors.clear();
        cache->held_half.clear();
      }
      if (cached) cached->release();  // after its write, which shares the weights
      weights.release();
      released = true;
    };
    release(Network::kText, *clip_weights, clip_cached.get(), {&clip_executors});
    release(Network::kUNet, *unet_weights, unet_cached.get(), {&unet_executors});
    release(Network::kVae, *vae_weights, vae_cached.get(), {&decode_executors, &encode_executors});
    if (released) device->trim();
  }
};

CheckpointBackend::CheckpointBackend(const std::string& model_dir, Residency residency,
                                     const tuning::TuningDb* tuning_db)
    : CheckpointBackend(std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(model_dir)), residency,
                        tuning_db) {}

CheckpointBackend::CheckpointBackend(std::shared_ptr<const DiffusersCheckpoint> checkpoint, Residency residency,
                                     const tuning::TuningDb* tuning_db)
    : state_(std::make_unique<State>(std::move(checkpoint), residency, tuning_db)) {}

CheckpointBackend::~CheckpointBackend() = default;

const ModelInfo& CheckpointBackend::info() const { return state_->info; }

std::size_t CheckpointBackend::executor_count() const {
  return state_->clip_executors.executors.size() + state_->unet_executors.executors.size() +
         state_->decode_executors.executors.size() + state_->encode_executors.executors.size();
}

std::size_t CheckpointBackend::loaded_weight_count() const {
  std::size_t held_half = 0;
  for (const ExecutorCache* cache : state_->caches()) held_half += cache->held_half.size();
  return state_->clip_weights->loaded_count() + state_->unet_weights->loaded_count() +
         state_->vae_weights->loaded_count() + held_half;
}

void CheckpointBackend::set_call_progress(CallProgress progress) { state_->launch_progress = std::move(progress); }

void CheckpointBackend::set_profile(runtime::OpProfile* profile) {
  for (ExecutorCache* cache : state_->caches()) cache->set_profile(profile);
}

TuningCoverage CheckpointBackend::tuning_coverage() const {
  TuningCoverage total;
  for (const ExecutorCache* cache : state_->caches()) {
    for (const auto& [key, coverage] : cache->coverage) {
      total.tuned += coverage.tuned;
      total.tunable += coverage.tunable;
    }
  }
  return total;
}

void CheckpointBackend::use_weight_cache(std::shared_ptr<PreparedWeightCache> cache) {
  if (executor_count() > 0) throw Error("engine", "use_weight_cache after the backend's first call");
  state_->use_weight_cache(std::move(cache));
}

void CheckpointBackend::compute_in(DType compute) {
  for (ExecutorCache* cache : state_->caches()) {
    if (!cache->compiled.empty()) throw Error("engine", "compute_in after a network was compiled");
  }
  for (ExecutorCache* cache : state_->caches()) cache->compute = compute;
}

bool CheckpointBackend::uses_weight_cache() const { return state_->clip_cached != nullptr; }

bool CheckpointBackend::weight_cache_hit(const std::string& component) const {
  const CachedNetworkWeights* cached = component == "text_encoder" ? state_->clip_cached.get()
                                       : component == "unet"       ? state_->unet_cached.get()
                                       : component == "vae"        ? state_->vae_cached.get()
                                                                   : nullptr;
  return cached != nullptr && cached->hit();
}

void CheckpointBackend::check_memory(const RunShapes& run) {
  State& state = *state_;
  // The decoder first: plan_vae_decode has just asked vae_decode_fit about it, and each estimate
  // leaves the process a little larger (the kernels it made stay in oneDNN's primitive cache), so
  // asked later the same decode could be refused after it was planned to fit. The prefetch thread
  // starts after the checks for the same reason (its stack and allocator arena take address space).
  // Each check keeps cpu::kRunGrowthAllowance aside for what the networks running first leave.
  constexpr auto kBeforeRun = cpu::MemoryCheckTime::kBeforeRun;
  const Shape decoded = run.decode_tile.value_or(run.latents);
  state.decode_executors.check(
      decoded, [&] { return vae_decode_graph(state.vae, decoded[0], decoded[2], decoded[3]); }, kBeforeRun);
  state.clip_executors.check(
      {run.text_rows, run.tokens}, [&] { return clip_text_graph(state.clip, run.text_rows, run.tokens); }, kBeforeRun);
  if (run.init_image) {
    const Shape& image = *run.init_image;
    state.encode_executors.check(
        image, [&] { return vae_encode_graph(state.vae, image[0], image[2], image[3]); }, kBeforeRun);
  }
  const Shape& latents = run.latents;
  const std::int64_t batch = run.guided ? 2 : 1;
  state.unet_executors.check(
      {batch, latents[2], latents[3], run.tokens},
      [&] { return unet_graph(state.unet, batch, latents[2], latents[3], run.tokens); }, kBeforeRun);
  state.device->trim();  // the plans the workspace estimates made; each network makes its own
  state.prefetch(run.init_image.has_value());
}

DecodeFit CheckpointBackend::vae_decode_fit(const Shape& latents) {
  if (latents.size() != 4) {
    throw Error("engine", "VAE decoder input " + shape_to_string(latents) + ", expected [batch,channels,height,width]");
  }
  State& state = *state_;
  const bool fits = cpu::memory_fits(state.decode_executors.need(
      latents, [&] { return vae_decode_graph(state.vae, latents[0], latents[2], latents[3]); }));
  state.device->trim();  // the plans the workspace estimate made
  return fits ? DecodeFit::kFits : DecodeFit::kTooLarge;
}

HostTensor CheckpointBackend::encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) {
  if (batch < 1 || ids.size() % static_cast<std::size_t>(batch) != 0) {
    throw Error("engine",
                "encode_text: " + std::to_string(ids.size()) + " ids do not form " + std::to_string(batch) + " rows");
  }
  const auto tokens = static_cast<std::int64_t>(ids.size()) / batch;
  state_->activate(State::Network::kText);
  auto& executor =
      state_->clip_executors.get({batch, tokens}, [&] { return clip_text_graph(state_->clip, batch, tokens); });
  executor.set_input(0, ids, {batch, tokens});
  executor.submit();
  return executor.read_output(0);
}

HostTensor CheckpointBackend::unet_on_host(const HostTensor& sample, double timestep, const HostTensor& context) {
  require_rank(sample, 4, "UNet sample", "[batch,channels,height,width]");
  require_rank(context, 3, "UNet context", "[batch,tokens,width]");
  const std::int64_t batch = sample.shape[0];
  if (context.shape[0] != batch) {
    throw Error("engine", "UNet sample " + shape_to_string(sample.shape) + " and context " +
                              shape_to_string(context.shape) + " differ in batch size");
  }
  state_->activate(State::Network::kUNet);
  auto& executor = state_->unet_executors.get({batch, sample.shape[2], sample.shape[3], context.shape[1]}, [&] {
    return unet_graph(state_->unet, batch, sample.shape[2], sample.shape[3], context.shape[1]);
  });
  // diffusers broadcasts one timestep over the batch and embeds it in float32.
  HostTensor timesteps({batch}, std::vector<float>(static_cast<std::size_t>(batch), static_cast<float>(timestep)));
  executor.set_input(0, sample);
  executor.set_input(1, timesteps);
  executor.set_input(2, context);
  executor.submit();
  return executor.read_output(0);
}

HostTensor CheckpointBackend::vae_decode_on_host(const HostTensor& latents) {
  require_rank(latents, 4, "VAE decoder input", "[batch,channels,height,width]");
  const Shape& shape = latents.shape;
  state_->activate(State::Network::kVae);
  auto& executor =
      state_->decode_executors.get(shape, [&] { return vae_decode_graph(state_->vae, shape[0], shape[2], shape[3]); });
  executor.set_input(0, latents);
  executor.submit();
  return executor.read_output(0);
}

std::pair<HostTensor, HostTensor> CheckpointBackend::vae_encode(const HostTensor& image) {
  require_rank(image, 4, "VAE encoder input", "[batch,3,height,width]");
  const Shape& shape = image.shape;
  state_->activate(State::Network::kVae);
  auto& executor =
      state_->encode_executors.get(shape, [&] { return vae_encode_graph(state_->vae, shape[0], shape[2], shape[3]); });
  executor.set_input(0, image);
  executor.submit();
  HostTensor mean = executor.read_output(0);
  return {std::move(mean), executor.read_output(1)};
}

}  // namespace websd::backends
