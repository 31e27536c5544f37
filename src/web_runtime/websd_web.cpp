#include "web_runtime/websd_web.h"

#include <emscripten/emscripten.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "artifact/function_signatures.h"
#include "backends/artifact_backend.h"
#include "backends/artifact_model.h"
#include "core/error.h"
#include "io/safetensors_reader.h"
#include "pipeline/generation_params.h"
#include "pipeline/generation_request_json.h"
#include "pipeline/generation_session.h"
#include "pipeline/progress.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "runtime/op_profile.h"
#include "web_runtime/js_artifact_source.h"
#include "web_runtime/web_host_imports.h"

namespace {

using namespace websd;

// What a run is doing between two websd_advance calls.
enum class Stage { kPrepare, kStartImage, kSteps, kDecode, kDone };

struct Run {
  std::unique_ptr<schedulers::Scheduler> scheduler;
  std::unique_ptr<GenerationSession> session;
  Stage stage = Stage::kPrepare;
  bool submitted = false;  // a part awaits its finish_* call
  int image = 0;
  int steps = 0;  // of the image being made
  std::optional<GeneratedImage> ready;
};

// One network called alone (websd_network_*), for conformance against the CPU and references.
struct NetworkCall {
  std::optional<TensorDownload> download;
  HostTensor output;
};

// The weights websd_load hands to the GPU per call: half the bridge's upload staging (4 x 32 MiB,
// websd_gpu.mjs), so that one half fills while the GPU copies the other out.
constexpr std::uint64_t kLoadPartBytes = 64ull << 20;

struct Runtime {
  std::string artifact_dir;
  std::unique_ptr<backends::ArtifactBackend> backend;
  std::unique_ptr<runtime::OpProfile> profile;  // websd_profile_start's, until websd_close
  std::string profile_json;
  std::optional<NetworkCall> call;
  std::string call_shape;
  std::string function;  // websd_function_submit's, until websd_function_finish
  std::optional<ClipTokenizer> tokenizer;
  std::unique_ptr<ProgressPrinter> printer;
  std::unique_ptr<Run> run;
  std::string part;
  std::string image_json;
  std::string progress_json;
  std::string info_json;
  std::string load_json;
  std::string error;
  // What websd_stage_init_* filled for the next websd_begin, which takes it.
  std::optional<RgbImage> staged_image;
  std::optional<HostTensor> staged_latents;
};

// Standard error as the host shows it (process.stderr under Node, the console in a page), so that
// progress lines keep their carriage returns.
class HostStderrBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    pending_ += static_cast<char>(c);
    if (c == '\n' || c == '\r') sync();
    return c;
  }
  int sync() override {
    if (!pending_.empty()) websd_stderr_write(pending_.data(), static_cast<int>(pending_.size()));
    pending_.clear();
    return 0;
  }

 private:
  std::string pending_;
};

std::ostream& host_stderr() {
  static HostStderrBuffer buffer;
  static std::ostream stream(&buffer);
  return stream;
}

Runtime& web_state() {
  static Runtime state;
  return state;
}

// Runs `body`, keeping an error's message for websd_error(); returns `failed` after one.
template <typename Body>
auto guarded(Body body, decltype(body()) failed) -> decltype(body()) {
  try {
    web_state().error.clear();
    return body();
  } catch (const std::exception& error) {
    web_state().error = error.what();
    return failed;
  }
}

// Finishes the part submitted last, then submits the next: 1 submitted, 2 an image ready, 0 done.
int advance(Runtime& rt) {
  Run& run = *rt.run;
  GenerationSession& session = *run.session;
  for (;;) {
    switch (run.stage) {
      case Stage::kPrepare:
        if (run.submitted) session.finish_prepare();
        run.submitted = session.submit_prepare();
        if (run.submitted) {
          rt.part = "prepare";
          return 1;
        }
        run.stage = Stage::kStartImage;
        break;
      case Stage::kStartImage:
        if (run.image == session.image_count()) {
          run.stage = Stage::kDone;
          break;
        }
        run.steps = session.start_image(run.image);
        run.stage = Stage::kSteps;
        break;
      case Stage::kSteps:
        if (run.submitted) session.finish_step();
        run.submitted = session.submit_step();
        if (run.submitted) {
          rt.part = "step";
          return 1;
        }
        session.submit_decode();
        run.submitted = true;
        run.stage = Stage::kDecode;
        rt.part = "decode";
        return 1;
      case Stage::kDecode:
        run.ready = session.finish_decode();
        run.submitted = false;
        run.image += 1;
        run.stage = Stage::kStartImage;
        rt.image_json =
            nlohmann::json{{"index", run.ready->index},           {"seed", std::to_string(run.ready->seed)},
                           {"width", run.ready->image.width},     {"height", run.ready->image.height},
                           {"parameters", run.ready->parameters}, {"latents_shape", run.ready->latents.shape}}
                .dump();
        return 2;
      case Stage::kDone:
        rt.part.clear();
        return 0;
    }
  }
}

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE int websd_open(int redraw_progress, const char* tier) {
  return guarded(
      [&] {
        Runtime& rt = web_state();
        rt.run.reset();
        // Every network stays on the GPU: a page makes many images, and reloading the UNet for each
        // would stream its shards again.
        auto source = std::make_unique<web::JsArtifactSource>();
        rt.artifact_dir = source->describe();
        backends::ArtifactAccess access;
        access.tier = tier != nullptr ? tier : "";  // chosen by the page or the Node runner (websd_gpu.mjs)
        rt.backend =
            std::make_unique<backends::ArtifactBackend>(std::move(source), access, backends::Residency::kAllNetworks);
        rt.tokenizer = rt.backend->tokenizer();
        rt.printer = std::make_unique<ProgressPrinter>(host_stderr(), redraw_progress != 0);
        return 0;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE int websd_load() {
  return guarded(
      [] {
        Runtime& rt = web_state();
        if (!rt.backend) throw Error("web", "websd_load before websd_open");
        // The run websd_begin validated, else the defaults (GenerationParams': guided, the default
        // tiling) at the artifact's default size.
        GenerationRequest request;
        if (rt.run) {
          request = rt.run->session->request();
        } else {
          backends::choose_artifact_size(rt.backend->sizes(), rt.artifact_dir, false, request.params.width,
                                         request.params.height, "web");
        }
        const RunPlan plan = plan_run(*rt.backend, request);
        rt.backend->check_memory(plan.shapes);
        return rt.backend->load_part(plan.shapes, kLoadPartBytes) ? 0 : 1;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE int websd_begin(const char* request_json) {
  return guarded(
      [&] {
        Runtime& rt = web_state();
        if (!rt.backend) throw Error("web", "websd_begin before websd_open");
        const nlohmann::json json = nlohmann::json::parse(request_json);
        GenerationRequest request = generation_request_from_json(json);
        request.init_image = std::exchange(rt.staged_image, std::nullopt);
        request.init_latents = std::exchange(rt.staged_latents, std::nullopt);
        // The artifact's default size when neither the request nor an init image or latents give
        // one; a size it does not hold is refused here.
        backends::choose_artifact_size(rt.backend->sizes(), rt.artifact_dir, request.init_image || request.init_latents,
                                       request.params.width, request.params.height, "web");
        auto run = std::make_unique<Run>();
        const std::string name = json.value("scheduler", std::string());
        const nlohmann::json given = json.value("scheduler_config", nlohmann::json());
        const nlohmann::json config = given.is_null() ? rt.backend->scheduler_config() : given;
        if (config.is_null() && name.empty()) {
          throw Error("web", rt.backend->scheduler_config_origin() + " does not exist (name a scheduler)");
        }
        run->scheduler = config.is_null()
                             ? schedulers::create_scheduler_by_name(name)
                             : schedulers::create_scheduler(config, name, rt.backend->scheduler_config_origin());
        rt.run.reset();
        run->session = std::make_unique<GenerationSession>(*rt.backend, *rt.tokenizer, request, *run->scheduler,
                                                           [&rt](const ProgressEvent& event) { (*rt.printer)(event); });
        rt.run = std::move(run);
        return 0;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE std::uint8_t* websd_stage_init_image(int width, int height) {
  return guarded(
      [&]() -> std::uint8_t* {
        if (width <= 0 || height <= 0 || width > kMaxImageSide || height > kMaxImageSide) {
          throw Error("web", "an init image of " + std::to_string(width) + "x" + std::to_string(height) +
                                 " pixels (each side 1 to " + std::to_string(kMaxImageSide) + ")");
        }
        RgbImage& image = web_state().staged_image.emplace();
        image.width = width;
        image.height = height;
        image.pixels.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3, 0);
        return image.pixels.data();
      },
      nullptr);
}

EMSCRIPTEN_KEEPALIVE float* websd_stage_init_latents(const char* shape_json) {
  return guarded(
      [&]() -> float* {
        const nlohmann::json shape = nlohmann::json::parse(shape_json, nullptr, false);
        if (!shape.is_array() || shape.size() != 4 ||
            !std::all_of(shape.begin(), shape.end(), [](const auto& d) { return d.is_number_unsigned() && d > 0; })) {
          throw Error("web", std::string("init latents of shape ") + shape_json + " (expected [batch, C, h, w])");
        }
        const Shape dims = shape.get<Shape>();
        if (shape_numel(dims) > (std::int64_t{1} << 28)) throw Error("web", "init latents of more than 2^28 values");
        return web_state().staged_latents.emplace(dims).data.data();
      },
      nullptr);
}

EMSCRIPTEN_KEEPALIVE int websd_advance() {
  return guarded(
      [] {
        Runtime& rt = web_state();
        if (!rt.run) throw Error("web", "websd_advance without a run (websd_begin)");
        return advance(rt);
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE const char* websd_part() { return web_state().part.c_str(); }

EMSCRIPTEN_KEEPALIVE const char* websd_progress_json() {
  Runtime& rt = web_state();
  nlohmann::json progress = nlohmann::json::object();
  if (rt.run && rt.run->session) {
    progress = {{"image", rt.run->image},
                {"images", rt.run->session->image_count()},
                {"step", rt.run->session->steps_done()},
                {"steps", rt.run->steps}};
    const HostTensor& preview = rt.run->session->preview_latents();
    if (!preview.data.empty()) progress["preview_shape"] = preview.shape;
  }
  rt.progress_json = progress.dump();
  return rt.progress_json.c_str();
}

EMSCRIPTEN_KEEPALIVE const char* websd_info_json() {
  return guarded(
      []() -> const char* {
        Runtime& rt = web_state();
        if (!rt.backend) throw Error("web", "websd_info_json before websd_open");
        nlohmann::json sizes = nlohmann::json::array();
        for (const artifact::ImageSize& size : rt.backend->sizes()) {
          sizes.push_back({{"width", size.width}, {"height", size.height}});
        }
        const nlohmann::json config = rt.backend->scheduler_config();
        const GenerationParams defaults;
        rt.info_json = nlohmann::json{{"model", rt.backend->info().name},
                                      {"sizes", sizes},
                                      {"schedulers", schedulers::scheduler_names()},
                                      {"scheduler_class", config.is_object() ? config.value("_class_name", "") : ""},
                                      {"max_tokens", rt.backend->info().max_tokens},
                                      // The request's defaults, one source for the CLI and the page.
                                      {"defaults",
                                       {{"steps", defaults.steps},
                                        {"guidance_scale", defaults.guidance_scale},
                                        {"strength", defaults.strength}}}}
                           .dump();
        return rt.info_json.c_str();
      },
      nullptr);
}
EMSCRIPTEN_KEEPALIVE const char* websd_load_json() {
  return guarded(
      []() -> const char* {
        Runtime& rt = web_state();
        if (!rt.backend) throw Error("web", "websd_load_json before websd_open");
        const backends::ArtifactBackend::LoadTimes times = rt.backend->load_times();
        rt.load_json = nlohmann::json{{"shard_read_s", times.shards.read_s},
                                      {"shard_verify_s", times.shards.verify_s},
                                      {"shard_decrypt_s", times.shards.decrypt_s},
                                      {"shard_bytes", times.shards.bytes},
                                      {"shards", times.shards.shards},
                                      {"shards_hashed_by_host", times.shards.hashed_by_source},
                                      {"weight_read_s", times.weights.read_s},
                                      {"weight_import_s", times.weights.import_s},
                                      {"weight_bytes", times.weights.bytes},
                                      {"executors_s", times.weights.executors_s}}
                           .dump();
        return rt.load_json.c_str();
      },
      nullptr);
}

EMSCRIPTEN_KEEPALIVE const char* websd_image_json() { return web_state().image_json.c_str(); }

EMSCRIPTEN_KEEPALIVE const std::uint8_t* websd_image_rgb() {
  const Runtime& rt = web_state();
  return rt.run && rt.run->ready ? rt.run->ready->image.pixels.data() : nullptr;
}

EMSCRIPTEN_KEEPALIVE int websd_image_rgb_bytes() {
  const Runtime& rt = web_state();
  return rt.run && rt.run->ready ? static_cast<int>(rt.run->ready->image.pixels.size()) : 0;
}

EMSCRIPTEN_KEEPALIVE const float* websd_image_latents() {
  const Runtime& rt = web_state();
  return rt.run && rt.run->ready ? rt.run->ready->latents.data.data() : nullptr;
}

EMSCRIPTEN_KEEPALIVE const float* websd_preview_latents() {
  const Runtime& rt = web_state();
  if (!rt.run || !rt.run->session) return nullptr;
  const HostTensor& preview = rt.run->session->preview_latents();
  return preview.data.empty() ? nullptr : preview.data.data();
}

EMSCRIPTEN_KEEPALIVE int websd_network_submit(const char* network, const char* inputs_path, double timestep) {
  return guarded(
      [&] {
        Runtime& rt = web_state();
        if (!rt.backend) throw Error("web", "websd_network_submit before websd_open");
        const SafetensorsFile inputs(inputs_path);
        const std::string name = network;
        NetworkCall call;
        if (name == "text") {
          const HostTensor ids = inputs.read_f32("ids");
          std::vector<std::int64_t> values(ids.data.begin(), ids.data.end());
          call.download = rt.backend->submit_encode_text(values, ids.shape.at(0));
        } else if (name == "unet") {
          const DeviceTensor sample = rt.backend->upload(inputs.read_f32("sample"));
          const DeviceTensor context = rt.backend->upload(inputs.read_f32("context"));
          call.download = rt.backend->download(rt.backend->unet(sample, timestep, context));
        } else if (name == "vae_decode") {
          call.download = rt.backend->download(rt.backend->vae_decode(rt.backend->upload(inputs.read_f32("latents"))));
        } else {
          throw Error("web", "no network '" + name + "' (text, unet, vae_decode)");
        }
        rt.call = std::move(call);
        return 1;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE int websd_network_finish(const char* output_path) {
  return guarded(
      [&] {
        Runtime& rt = web_state();
        if (!rt.call || !rt.call->download) throw Error("web", "websd_network_finish without a submitted call");
        const HostTensor output = rt.call->download->wait();
        rt.call.reset();
        std::ofstream out(output_path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(output.data.data()),
                  static_cast<std::streamsize>(output.data.size() * sizeof(float)));
        if (!out) throw Error("web", std::string("cannot write ") + output_path);
        rt.call_shape = nlohmann::json(output.shape).dump();
        return 0;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE const char* websd_network_shape() { return web_state().call_shape.c_str(); }

EMSCRIPTEN_KEEPALIVE int websd_function_submit(const char* symbol) {
  return guarded(
      [&] {
        Runtime& rt = web_state();
        if (!rt.backend) throw Error("web", "websd_function_submit before websd_open");
        if (!rt.function.empty()) throw Error("web", "websd_function_submit while " + rt.function + " runs");
        artifact::require_function(rt.backend->function_names(), symbol, rt.artifact_dir, "web");
        rt.backend->submit_function_once(symbol);
        rt.function = symbol;
        return 0;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE int websd_function_finish() {
  return guarded(
      [] {
        Runtime& rt = web_state();
        if (rt.function.empty()) throw Error("web", "websd_function_finish without a submitted function");
        const std::string symbol = std::exchange(rt.function, std::string());
        rt.backend->finish_function(symbol);
        return 0;
      },
      -1);
}

EMSCRIPTEN_KEEPALIVE int websd_profile_start() {
  return guarded(
      [] {
        Runtime& rt = web_state();
        if (!rt.backend) throw Error("web", "websd_profile_start before websd_open");
        rt.profile = std::make_unique<runtime::OpProfile>();
        rt.backend->set_profile(rt.profile.get());
        return 0;
      },
      -1);
}

// Null after an error (collecting the last launches' times polls the GPU, which may report one).
EMSCRIPTEN_KEEPALIVE const char* websd_profile_json() {
  return guarded(
      []() -> const char* {
        Runtime& rt = web_state();
        nlohmann::json ops = nlohmann::json::array();
        if (rt.profile) {
          if (rt.backend) rt.backend->collect_profile();  // the last step's and the decode's launches
          for (const auto& [key, totals] : rt.profile->by_op) {
            ops.push_back(
                {{"key", key}, {"seconds", totals.seconds}, {"calls", totals.calls}, {"flops", totals.flops}});
          }
        }
        rt.profile_json = ops.dump();
        return rt.profile_json.c_str();
      },
      nullptr);
}

EMSCRIPTEN_KEEPALIVE const char* websd_error() { return web_state().error.c_str(); }

EMSCRIPTEN_KEEPALIVE void websd_close() {
  Runtime& rt = web_state();
  rt.run.reset();
  if (rt.backend) rt.backend->set_profile(nullptr);
  rt.profile.reset();
  rt.printer.reset();
  rt.tokenizer.reset();
  rt.backend.reset();
}

}  // extern "C"
