// websd bench: times the three networks of a model on this machine through the same backends that
// `websd generate` uses: text encoder (batch 2, as with guidance), one UNet step with
// classifier-free guidance (batch 2), VAE decode, each the median of several runs after one warm-up
// run that builds the graphs and loads the weights; then the peak resident memory of that phase.
// With --model it runs the checkpoint on the graph executor, with --artifact a compiled artifact
// on the artifact runtime; with both, one after the other in this process (the first backend
// released and the peak reset in between) and the ratios artifact / model.

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "app/artifact_options.h"
#include "app/command_registry.h"
#include "app/cpu_compute_options.h"
#include "app/model_options.h"
#include "app/number_ranges.h"
#include "app/openmp_policy.h"
#include "app/process_stats.h"
#include "app/vae_tiling_options.h"
#include "app/webgpu_node_runner.h"
#include "app/weight_cache_options.h"
#include "artifact/artifact.h"
#include "backends/artifact_backend.h"
#include "backends/artifact_model.h"
#include "backends/checkpoint_backend.h"
#include "core/error.h"
#include "core/utf8.h"
#include "import/checkpoint_tokenizer.h"
#include "io/json_file.h"
#include "pipeline/generation_params.h"
#include "pipeline/generation_request_json.h"
#include "pipeline/host_calls.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/tokenizer/clip_tokenizer.h"
#include "pipeline/vae_decode_plan.h"
#include "targets/cpu/runtime/cpu_device.h"
#include "tuning/apply_tuning.h"

namespace websd::app {
namespace {

struct BenchOptions {
  ModelOptions model;
  std::string artifact;
  ArtifactAccessOptions access;
  std::int64_t width = 0;
  std::int64_t height = 0;
  int runs = 3;
  bool json = false;
  bool profile = false;
  std::string tuning_db;
  WeightCacheOptions weight_cache;
  CpuComputeOptions compute;
  VaeTiling vae_tiling;
};

struct Timing {
  double first_s = 0;   // warm-up call: graph build, weight load, first run
  double median_s = 0;  // of the timed runs
};

// `after_warm_up` runs between the warm-up call and the timed runs.
template <typename Call, typename Hook>
Timing time_call(int runs, const Call& call, const Hook& after_warm_up) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_of = [&] {
    const auto start = Clock::now();
    call();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  Timing timing;
  timing.first_s = seconds_of();
  after_warm_up();
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) samples.push_back(seconds_of());
  std::sort(samples.begin(), samples.end());
  timing.median_s = samples[samples.size() / 2];
  return timing;
}

// Ops sorted by total time, largest first. The executors time each launch under "<op> <shapes>":
// the rows here sum over shapes.
std::vector<std::pair<std::string, runtime::OpTotals>> ops_by_time(const runtime::OpProfile& profile) {
  std::map<std::string, runtime::OpTotals> by_op;
  for (const auto& [key, totals] : profile.by_op) {
    runtime::OpTotals& sum = by_op[key.substr(0, key.find(' '))];
    sum.seconds += totals.seconds;
    sum.calls += totals.calls;
    sum.flops += totals.flops;
  }
  std::vector<std::pair<std::string, runtime::OpTotals>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  return ops;
}

nlohmann::json profile_json(const runtime::OpProfile& profile, int runs) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& [name, totals] : ops_by_time(profile)) {
    ops.push_back({{"op", name},
                   {"seconds_per_run", totals.seconds / runs},
                   {"calls_per_run", totals.calls / runs},
                   {"gflops", totals.flops > 0 ? totals.flops / totals.seconds * 1e-9 : 0.0}});
  }
  return ops;
}

// Per-op table of one network: time per run, share, calls per run, and GFLOP/s for GEMM-like ops.
void print_profile(const char* network, const runtime::OpProfile& profile, int runs) {
  const double total = profile.total_seconds();
  std::printf("\n%s: %.3f s of kernels per run\n%-20s %10s %7s %7s %9s\n", network, total / runs, "op", "s/run",
              "share", "calls", "GFLOP/s");
  for (const auto& [name, totals] : ops_by_time(profile)) {
    std::printf("%-20s %10.3f %6.1f%% %7lld", name.c_str(), totals.seconds / runs, 100.0 * totals.seconds / total,
                static_cast<long long>(totals.calls / runs));
    if (totals.flops > 0) std::printf(" %9.1f", totals.flops / totals.seconds * 1e-9);
    std::printf("\n");
  }
}

struct BenchResult {
  std::string backend;  // "model" or "artifact"
  std::string path;
  std::int64_t width = 0, height = 0;
  Timing text, unet, vae;
  std::size_t vae_tiles = 0;  // 0: the whole decode; else the tiles it ran in (--vae-tiling)
  std::uint64_t peak_rss = 0;
  double open_seconds = 0;          // --model: opening the checkpoint and checking every tensor
  std::uint64_t open_peak_rss = 0;  // peak RSS right after that
  // --model: whether each network found its prepared weights in the cache; empty when it is off.
  std::map<std::string, bool> weight_cache_hits;
  // webgpu artifacts (run under Node): the adapter, the pipeline creation and the GPU's peak.
  std::string adapter;
  std::string tier;  // the kernel tier it ran (empty: an artifact of one lowering)
  std::uint64_t peak_gpu_bytes = 0;
  nlohmann::json load;  // webgpu: the runner's load parts (websd_load_json, pipelines_s)
  runtime::OpProfile text_profile, unet_profile, vae_profile;
};

// Times `backend`'s three networks at width x height (0: the model's default size).
template <typename Backend>
void bench_backend(Backend& backend, const ClipTokenizer& tokenizer, const BenchOptions& options, BenchResult& result) {
  const ModelInfo& info = backend.info();
  const std::int64_t scale = info.vae_scale_factor;
  const std::int64_t width = result.width ? result.width : info.sample_width * scale;
  const std::int64_t height = result.height ? result.height : info.sample_height * scale;
  check_image_size("bench", width, height, info);
  result.width = width;
  result.height = height;
  std::vector<std::int64_t> ids;
  for (const char* prompt : {"", "a photo of an astronaut riding a horse on mars"}) {
    for (const auto id : tokenizer.encode(prompt)) ids.push_back(id);
  }
  std::cerr << "websd bench: " << result.backend << " " << result.path << " at " << width << "x" << height << ", "
            << options.runs << " timed runs each\n";

  // One kernel profile per network, over its timed runs only.
  const auto profile_into = [&](runtime::OpProfile& profile) {
    return [&backend, &profile, &options] { backend.set_profile(options.profile ? &profile : nullptr); };
  };
  // After a network's first call: whether the prepared-weight cache served it (--model runs).
  const auto after_first_call = [&](const char* component, runtime::OpProfile& profile) {
    return [&backend, &result, component, set_profile = profile_into(profile)] {
      if constexpr (std::is_same_v<Backend, backends::CheckpointBackend>) {
        if (backend.uses_weight_cache()) result.weight_cache_hits[component] = backend.weight_cache_hit(component);
      }
      set_profile();
    };
  };
  HostTensor context;
  result.text = time_call(
      options.runs, [&] { context = backend.encode_text(ids, 2); },
      after_first_call("text_encoder", result.text_profile));
  TorchGenerator generator(0);
  // Inputs on the device before timing, as the pipeline keeps them; each run waits for its output.
  const DeviceTensor sample = backend.upload(generator.randn({2, info.latent_channels, height / scale, width / scale}));
  const DeviceTensor context_on_device = backend.upload(context);
  backend.set_profile(nullptr);
  result.unet = time_call(
      options.runs, [&] { backend.download(backend.unet(sample, 500.0, context_on_device)).wait(); },
      after_first_call("unet", result.unet_profile));
  const HostTensor host_latents = generator.randn({1, info.latent_channels, height / scale, width / scale});
  const DeviceTensor latents = backend.upload(host_latents);
  // The decode as generate would run it: whole, or in tiles (--vae-tiling, the memory available).
  const VaeDecodePlan plan = plan_vae_decode(backend, options.vae_tiling, host_latents.shape);
  if (!plan.note.empty()) std::cerr << "websd bench: " << plan.note << "\n";
  result.vae_tiles = plan.tiles ? plan.tiles->count() : 0;
  backend.set_profile(nullptr);
  result.vae = time_call(
      options.runs,
      [&] {
        if (plan.tiles) {
          call_vae_decode_tiled(backend, host_latents, *plan.tiles);
        } else {
          backend.download(backend.vae_decode(latents)).wait();
        }
      },
      after_first_call("vae", result.vae_profile));
  backend.set_profile(nullptr);
  result.peak_rss = peak_rss_bytes();
}

// The threads the kernels run on and how they wait for work (app/openmp_policy.h): figures from
// runs under different policies are not comparable.
nlohmann::json openmp_json() {
  const OpenmpPolicy policy = openmp_policy();
  return {{"threads", policy.threads}, {"wait_policy", policy.wait_policy}, {"set_by_websd", policy.set_by_websd}};
}

std::string openmp_text() {
  const OpenmpPolicy policy = openmp_policy();
  return std::to_string(policy.threads) + " OpenMP threads, wait policy " + policy.wait_policy +
         (policy.set_by_websd ? " (websd's default)" : " (from the environment)");
}

// --model: what a run spends before its first denoising step computes: opening the checkpoint,
// the text encoder's first call (compile, weights, run) and the UNet's first call less a step.
double time_to_first_step(const BenchResult& result) {
  return result.open_seconds + result.text.first_s + std::max(0.0, result.unet.first_s - result.unet.median_s);
}

std::string weight_cache_text(const BenchResult& result) {
  if (result.weight_cache_hits.empty()) return "off";
  std::string text;
  for (const auto& [component, hit] : result.weight_cache_hits) {
    text += (text.empty() ? "" : ", ") + component + (hit ? " hit" : " miss");
  }
  return text;
}

nlohmann::json result_json(const BenchResult& result, const BenchOptions& options) {
  const auto entry = [&](const Timing& t, const runtime::OpProfile& profile) {
    nlohmann::json json{{"median_s", t.median_s}, {"first_s", t.first_s}};
    if (options.profile) json["profile"] = profile_json(profile, options.runs);
    return json;
  };
  return {{result.backend, utf8_or_escaped(result.path)},  // a path: bytes, JSON holds UTF-8
          {"width", result.width},
          {"height", result.height},
          {"runs", options.runs},
          {"text_encoder", entry(result.text, result.text_profile)},
          {"unet_step_cfg", entry(result.unet, result.unet_profile)},
          {"vae_decode", entry(result.vae, result.vae_profile)},
          {"vae_decode_tiles", result.vae_tiles},
          {"peak_rss_bytes", result.peak_rss},
          {"open_s", result.open_seconds},
          {"open_peak_rss_bytes", result.open_peak_rss},
          {"time_to_first_step_s",
           result.backend == "model" || !result.adapter.empty() ? nlohmann::json(time_to_first_step(result)) : nullptr},
          {"weight_cache", result.weight_cache_hits},
          {"adapter", result.adapter.empty() ? nlohmann::json() : nlohmann::json(result.adapter)},
          {"tier", result.tier.empty() ? nlohmann::json() : nlohmann::json(result.tier)},
          {"peak_gpu_bytes", result.adapter.empty() ? nlohmann::json() : nlohmann::json(result.peak_gpu_bytes)},
          {"load", result.load},
          {"openmp", openmp_json()}};
}

// The webgpu runner's load parts: where the first calls' seconds went before kernels ran.
void print_load(const nlohmann::json& load) {
  const auto at = [&](const char* key) { return load.value(key, 0.0); };
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::printf("%-28s %10.3f s   (%.2f GiB of shards read into the runtime)\n", "  of which: shard reads",
              at("shard_read_s"), at("shard_bytes") / kGiB);
  std::printf("%-28s %10.3f s   (%lld of %lld shards by the digest the host computed as it read them)\n",
              "  shards' SHA-256 checks", at("shard_verify_s"), load.value("shards_hashed_by_host", 0LL),
              load.value("shards", 0LL));
  std::printf("%-28s %10.3f s   (%.2f GiB as stored; any conversion to the tier's dtype included)\n",
              "  weights handed to the GPU", at("weight_import_s"), at("weight_bytes") / kGiB);
  std::printf("%-28s %10.3f s   (kernel files read and checked, pipelines asked for)\n", "  executors made",
              at("executors_s"));
  std::printf("%-28s %10.3f s   (of the %.3f s of loading: the GPU copying staged weights out)\n",
              "  waiting for upload room", at("upload_wait_s"), at("load_s"));
  std::printf("%-28s %10.3f s   (wall time while any pipeline compiled, overlapping the rest)\n",
              "  pipelines compiling", at("pipelines_s"));
}

void print_result(const BenchResult& result, const BenchOptions& options) {
  const auto row = [](const char* name, const Timing& t) {
    std::printf("%-28s %10.3f s   (first call %.3f s)\n", name, t.median_s, t.first_s);
  };
  std::printf("%s %s (%lldx%lld; %s)\n", result.backend.c_str(), result.path.c_str(),
              static_cast<long long>(result.width), static_cast<long long>(result.height), openmp_text().c_str());
  if (result.backend == "model") {
    std::printf("%-28s %10.3f s   (peak RSS then %.2f GiB)\n", "open + check the checkpoint", result.open_seconds,
                static_cast<double>(result.open_peak_rss) / (1024.0 * 1024.0 * 1024.0));
  }
  if (!result.adapter.empty()) {
    std::printf("%-28s %s\n", "WebGPU adapter", result.adapter.c_str());
    if (!result.tier.empty()) std::printf("%-28s %s\n", "kernel tier", result.tier.c_str());
    std::printf("%-28s %10.3f s   (read and check the artifact, ask for every pipeline)\n", "open",
                result.open_seconds);
    if (const nlohmann::json open = result.load.is_object() ? result.load.value("open", nlohmann::json()) : nullptr;
        open.is_object()) {
      const auto at = [&](const char* key) { return open.value(key, 0.0); };
      std::printf("%-28s %10.3f s   (adapter and device)\n", "  of which: GPU device", at("device_s"));
      std::printf("%-28s %10.3f s   (compiled and instantiated)\n", "  WebAssembly runtime", at("runtime_s"));
      std::printf("%-28s %10.3f s   (of which %.3f s making kernels: WGSL parsed and checked)\n", "  websd_open",
                  at("websd_open_s"), at("kernel_calls_s"));
    }
  }
  if (result.adapter.empty()) {
    row("text encoder (batch 2)", result.text);
  } else {  // the runner times the prompt's encoding once, with the run's loading before it
    std::printf("%-28s %10.3f s   (every network's weights uploaded, pipelines waited for, prompt encoded)\n",
                "load + text encoder", result.text.first_s);
  }
  row("UNet step, CFG (batch 2)", result.unet);
  const std::string decode =
      result.vae_tiles ? "VAE decode, " + std::to_string(result.vae_tiles) + " tiles" : "VAE decode";
  row(decode.c_str(), result.vae);
  if (result.backend == "model") {
    std::printf("%-28s %10.3f s   (open, first text encoder call, first UNet call less a step; weight cache: %s)\n",
                "time to first step", time_to_first_step(result), weight_cache_text(result).c_str());
  }
  if (!result.adapter.empty()) {
    std::printf("%-28s %10.3f s   (open, first text encoder call, first UNet call less a step)\n", "time to first step",
                time_to_first_step(result));
    if (result.load.is_object()) print_load(result.load);
    std::printf("%-28s %10.2f GiB   (buffers held at once)\n", "peak GPU memory",
                static_cast<double>(result.peak_gpu_bytes) / (1024.0 * 1024.0 * 1024.0));
  }
  std::printf("%-28s %10.2f GiB\n", "peak RSS", static_cast<double>(result.peak_rss) / (1024.0 * 1024.0 * 1024.0));
  if (options.profile && !result.adapter.empty()) {
    print_profile("webgpu kernels, one generation of 2 steps (GPU timestamps, a compute pass per launch)",
                  result.unet_profile, 1);
    // The hottest kernels by shape, with their throughput (the GEMM-like ones).
    std::vector<std::pair<std::string, runtime::OpTotals>> keys(result.unet_profile.by_op.begin(),
                                                                result.unet_profile.by_op.end());
    std::sort(keys.begin(), keys.end(),
              [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    std::printf("\nhottest launches by shape:\n%10s %7s %9s  %s\n", "s", "calls", "TFLOP/s", "kernel and shapes");
    for (std::size_t i = 0; i < keys.size() && i < 12; ++i) {
      const runtime::OpTotals& t = keys[i].second;
      std::printf("%10.4f %7lld %9.2f  %s\n", t.seconds, static_cast<long long>(t.calls),
                  t.flops > 0 ? t.flops / t.seconds * 1e-12 : 0.0, keys[i].first.c_str());
    }
  } else if (options.profile) {
    print_profile("text encoder", result.text_profile, options.runs);
    print_profile("UNet step", result.unet_profile, options.runs);
    print_profile("VAE decode", result.vae_profile, options.runs);
  }
}

// A webgpu artifact, timed by its runtime under Node through one generation of two images of
// `runs` + 1 steps: the first part (every network's weights uploaded while the pipelines compile,
// then the prompt's encoding) is the text encoder's first call, the first step the UNet's, the
// other steps its timed runs, the first image's decode the VAE's first call and the second
// image's its timed run. Each part's time runs from its submit until the GPU has finished it.
void bench_webgpu_artifact(const BenchOptions& options, BenchResult& result) {
  if (options.access.given()) {
    throw Error("bench",
                options.artifact + " is a webgpu artifact: --key-file and --trust-key are not available for it yet");
  }
  const artifact::Artifact artifact =
      artifact::Artifact::open(options.artifact, artifact::ArtifactOpenOptions::for_target("webgpu"));
  result.width = options.width;
  result.height = options.height;
  backends::choose_artifact_size(backends::read_artifact_model(artifact.section("model"), options.artifact).sizes,
                                 options.artifact, false, result.width, result.height, "bench");
  GenerationRequest request;
  request.params.prompt = "a photo of an astronaut riding a horse on mars";
  request.params.steps = options.runs + 1;
  request.params.batch_count = 2;
  request.params.width = result.width;
  request.params.height = result.height;
  request.vae_tiling = options.vae_tiling;
  nlohmann::json sent = generation_request_to_json(request);
  sent["scheduler"] = "";
  sent["scheduler_config"] = nullptr;
  std::cerr << "websd bench: webgpu artifact " << options.artifact << " at " << result.width << "x" << result.height
            << ", " << options.runs << " timed UNet steps, under Node\n";
  nlohmann::json bench;
  run_webgpu_node("bench", "bench", options.artifact, options.access.tier, sent,
                  [&](const nlohmann::json& line) { bench = line.at("bench"); });
  if (bench.is_null()) throw Error("bench", "the webgpu runner reported no timings");
  const auto seconds = [&](const char* key) { return bench.at(key).get<std::vector<double>>(); };
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
  };
  const std::vector<double> prepare = seconds("prepare_s"), steps = seconds("step_s"), decode = seconds("decode_s");
  if (prepare.empty() || steps.size() < 2 || decode.size() < 2)
    throw Error("bench", "the webgpu runner's timings are incomplete");
  result.adapter = bench.at("adapter").get<std::string>();
  if (const auto tier = bench.find("tier"); tier != bench.end() && tier->is_string())
    result.tier = tier->get<std::string>();
  result.open_seconds = bench.at("open_s").get<double>();
  result.peak_gpu_bytes = bench.value("peak_gpu_bytes", nlohmann::json(0)).is_number()
                              ? bench.at("peak_gpu_bytes").get<std::uint64_t>()
                              : 0;
  result.load = bench.value("load", nlohmann::json());
  if (result.load.is_object()) {  // the runner's parts of open and of loading, printed with the load's
    result.load["open"] = bench.value("open", nlohmann::json());
    result.load["load_s"] = bench.value("load_s", 0.0);
    result.load["upload_wait_s"] = bench.value("load_wait_s", 0.0);
  }
  // The weights' upload (load_s, before the first part) counts with the prompt's encoding.
  const double first_part = bench.value("load_s", 0.0) + prepare.front();
  result.text = {first_part, first_part};
  result.unet = {steps.front(), median(std::vector<double>(steps.begin() + 1, steps.end()))};
  result.vae = {decode.front(), median(std::vector<double>(decode.begin() + 1, decode.end()))};
  result.peak_rss = bench.at("peak_rss_bytes").get<std::uint64_t>();  // the runner's: it holds the shards
  if (!options.profile) return;
  // Per kernel, from GPU timestamps: a run of its own (one image, two steps), since timing each
  // launch in its own compute pass slows the steps the timings above measured without it.
  request.params.steps = 2;
  request.params.batch_count = 1;
  sent = generation_request_to_json(request);
  sent["scheduler"] = "";
  sent["scheduler_config"] = nullptr;
  run_webgpu_node("bench", "profile", options.artifact, options.access.tier, sent, [&](const nlohmann::json& line) {
    for (const nlohmann::json& op : line.at("profile").at("ops")) {
      runtime::OpTotals& totals = result.unet_profile.by_op[op.at("key").get<std::string>()];
      totals.seconds += op.at("seconds").get<double>();
      totals.calls += op.at("calls").get<std::int64_t>();
      totals.flops += op.at("flops").get<double>();
    }
  });
}

void run_bench(const BenchOptions& options) {
  if (!options.tuning_db.empty() && options.model.model.empty() && !options.artifact.empty()) {
    throw Error("bench", "--tuning-db applies to --model; an artifact's kernels were tuned when it was built");
  }
  if (options.compute.given && options.model.model.empty() && !options.artifact.empty()) {
    throw Error("bench", "--dtype applies to --model; an artifact computes as it was built (websd build --dtype)");
  }
  if (options.access.given() && options.artifact.empty()) {
    throw Error("bench", "--key-file and --trust-key apply to an --artifact only");
  }
  std::vector<BenchResult> results;
  if (!options.model.model.empty() || options.artifact.empty()) {
    std::optional<tuning::TuningDb> tuning_db;
    if (!options.tuning_db.empty()) tuning_db = tuning::TuningDb::read_file(options.tuning_db);
    if (options.model.model.empty()) {
      std::cerr << "websd bench: no --model given: using the built-in DEMO model (tiny, random weights)\n";
    }
    BenchResult& result = results.emplace_back();
    result.backend = "model";
    result.width = options.width;
    result.height = options.height;
    reset_peak_rss();
    const auto open_start = std::chrono::steady_clock::now();
    const std::shared_ptr<const DiffusersCheckpoint> checkpoint = open_model(options.model, "bench");
    backends::CheckpointBackend backend(checkpoint, backends::Residency::kOneNetwork,
                                        tuning_db ? &*tuning_db : nullptr);
    backend.compute_in(cpu_compute_dtype(options.compute.dtype, "bench"));
    if (auto cache = open_weight_cache(options.weight_cache, "bench")) backend.use_weight_cache(std::move(cache));
    result.open_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - open_start).count();
    result.open_peak_rss = peak_rss_bytes();
    result.path = checkpoint->dir();
    bench_backend(backend, checkpoint_tokenizer(*checkpoint), options, result);
    if (tuning_db) {
      const backends::TuningCoverage coverage = backend.tuning_coverage();
      std::cerr << tuning::tuning_summary(coverage.tuned, coverage.tunable, options.tuning_db) << "\n";
    }
  }
  // The model's backend is gone: its convolution primitives and pages go back before the next
  // phase's peak (backends release them when they switch networks, not when they close).
  cpu::release_cpu_kernel_caches();
  if (!options.artifact.empty() && is_webgpu_artifact(options.artifact)) {
    BenchResult& result = results.emplace_back();
    result.backend = "artifact";
    result.path = options.artifact;
    bench_webgpu_artifact(options, result);
  } else if (!options.artifact.empty()) {
    BenchResult& result = results.emplace_back();
    result.backend = "artifact";
    result.path = options.artifact;
    reset_peak_rss();
    backends::ArtifactBackend backend(options.artifact, options.access.access());
    result.width = options.width;
    result.height = options.height;
    backends::choose_artifact_size(backend.sizes(), options.artifact, false, result.width, result.height, "bench");
    bench_backend(backend, backend.tokenizer(), options, result);
  }

  const BenchResult* model = results.front().backend == "model" ? &results.front() : nullptr;
  const BenchResult* artifact = results.back().backend == "artifact" ? &results.back() : nullptr;
  if (options.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& result : results) out.push_back(result_json(result, options));
    if (model && artifact) {
      out.push_back({{"ratio_artifact_over_model",
                      {{"unet_step_cfg", artifact->unet.median_s / model->unet.median_s},
                       {"vae_decode", artifact->vae.median_s / model->vae.median_s},
                       {"text_encoder", artifact->text.median_s / model->text.median_s},
                       {"peak_rss", static_cast<double>(artifact->peak_rss) / static_cast<double>(model->peak_rss)}}}});
    }
    std::cout << (out.size() == 1 ? out[0] : out).dump(2) << "\n";
    return;
  }
  for (const auto& result : results) print_result(result, options);
  if (model && artifact) {
    std::printf("artifact / model: UNet step %.3f, VAE decode %.3f, text encoder %.3f, peak RSS %.3f\n",
                artifact->unet.median_s / model->unet.median_s, artifact->vae.median_s / model->vae.median_s,
                artifact->text.median_s / model->text.median_s,
                static_cast<double>(artifact->peak_rss) / static_cast<double>(model->peak_rss));
  }
}

const bool registered = register_command(
    {"bench", "Time the text encoder, a UNet step with guidance and the VAE decode on this machine",
     [](CLI::App& command) {
       auto options = std::make_shared<BenchOptions>();
       add_model_options(command, options->model,
                         "diffusers model folder or single-file .safetensors (default: the built-in demo model)");
       command.add_option("--artifact", options->artifact,
                          "compiled artifact (websd build); with --model too, both are timed and compared");
       add_artifact_access_options(command, options->access);
       command.add_option("--width", options->width, "image width in pixels (default: the model's)")
           ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
       command.add_option("--height", options->height, "image height in pixels (default: the model's)")
           ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
       command.add_option("--runs", options->runs, "timed runs per network; the median is reported")
           ->capture_default_str()
           ->check(integer_range(1, std::numeric_limits<int>::max()));
       command.add_flag("--json", options->json, "print JSON instead of a table");
       command.add_flag("--profile", options->profile, "also time every kernel and print a per-op table per network");
       command.add_option("--tuning-db", options->tuning_db,
                          "tuning database from `websd tune`: kernels with a record use its parameters");
       add_weight_cache_option(command, options->weight_cache);
       add_cpu_compute_option(command, options->compute);
       add_vae_tiling_options(command, options->vae_tiling);
       command.callback([options] { run_bench(*options); });
     }});

}  // namespace
}  // namespace websd::app
