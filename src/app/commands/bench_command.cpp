// websd bench: times the three networks of a model on this machine through the same backend that
// `websd generate` uses: text encoder (batch 2, as with guidance), one UNet step with
// classifier-free guidance (batch 2), VAE decode, each the median of several runs after one warm-up
// run that builds the graphs and loads the weights; then the process's peak resident memory.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/command_registry.h"
#include "app/process_stats.h"
#include "core/error.h"
#include "engine/cpu_backend.h"
#include "engine/demo_model.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"

namespace websd::app {
namespace {

struct BenchOptions {
  std::string model;
  std::int64_t width = 0;
  std::int64_t height = 0;
  int runs = 3;
  bool json = false;
};

struct Timing {
  double first_s = 0;   // warm-up call: graph build, weight load, first run
  double median_s = 0;  // of the timed runs
};

template <typename Call>
Timing time_call(int runs, const Call& call) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_of = [&] {
    const auto start = Clock::now();
    call();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  Timing timing;
  timing.first_s = seconds_of();
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) samples.push_back(seconds_of());
  std::sort(samples.begin(), samples.end());
  timing.median_s = samples[samples.size() / 2];
  return timing;
}

void run_bench(const BenchOptions& options) {
  if (options.runs < 1) throw Error("bench", "--runs must be at least 1, got " + std::to_string(options.runs));
  std::string model_dir = options.model;
  if (model_dir.empty()) {
    std::cerr << "websd bench: no --model given: using the built-in DEMO model (tiny, random weights)\n";
    model_dir = engine::ensure_demo_model([](const std::string& line) { std::cerr << line << "\n"; });
  }
  engine::CpuBackend backend(model_dir);
  const ModelInfo& info = backend.info();
  const std::int64_t scale = info.vae_scale_factor;
  const std::int64_t width = options.width ? options.width : info.sample_size * scale;
  const std::int64_t height = options.height ? options.height : info.sample_size * scale;
  if (width % scale != 0 || height % scale != 0 || width <= 0 || height <= 0) {
    throw Error("bench", "size " + std::to_string(width) + "x" + std::to_string(height) +
                             " must be positive multiples of " + std::to_string(scale));
  }
  const auto tokenizer = load_clip_tokenizer(model_dir);
  std::vector<std::int64_t> ids;
  for (const char* prompt : {"", "a photo of an astronaut riding a horse on mars"}) {
    for (const auto id : tokenizer.encode(prompt)) ids.push_back(id);
  }
  std::cerr << "websd bench: " << model_dir << " at " << width << "x" << height << ", " << options.runs
            << " timed runs each\n";

  HostTensor context;
  const Timing text = time_call(options.runs, [&] { context = backend.encode_text(ids, 2); });
  TorchGenerator generator(0);
  const Shape latent_shape{2, info.latent_channels, height / scale, width / scale};
  const HostTensor sample = generator.randn(latent_shape);
  const Timing unet = time_call(options.runs, [&] { backend.unet(sample, 500.0, context); });
  const HostTensor latents = generator.randn({1, info.latent_channels, height / scale, width / scale});
  const Timing vae = time_call(options.runs, [&] { backend.vae_decode(latents); });
  const std::uint64_t peak = peak_rss_bytes();

  if (options.json) {
    const auto entry = [](const Timing& t) { return nlohmann::json{{"median_s", t.median_s}, {"first_s", t.first_s}}; };
    std::cout << nlohmann::json{{"model", model_dir},
                                {"width", width},
                                {"height", height},
                                {"runs", options.runs},
                                {"text_encoder", entry(text)},
                                {"unet_step_cfg", entry(unet)},
                                {"vae_decode", entry(vae)},
                                {"peak_rss_bytes", peak}}
                     .dump(2)
              << "\n";
    return;
  }
  const auto row = [](const char* name, const Timing& t) {
    std::printf("%-28s %10.3f s   (first call %.3f s)\n", name, t.median_s, t.first_s);
  };
  row("text encoder (batch 2)", text);
  row("UNet step, CFG (batch 2)", unet);
  row("VAE decode", vae);
  std::printf("%-28s %10.2f GiB\n", "peak RSS", static_cast<double>(peak) / (1024.0 * 1024.0 * 1024.0));
}

const bool registered = register_command(
    {"bench", "Time the text encoder, a UNet step with guidance and the VAE decode on this machine",
     [](CLI::App& command) {
       auto options = std::make_shared<BenchOptions>();
       command.add_option("--model", options->model, "diffusers model folder (default: the built-in demo model)");
       command.add_option("--width", options->width, "image width in pixels (default: the model's)");
       command.add_option("--height", options->height, "image height in pixels (default: the model's)");
       command.add_option("--runs", options->runs, "timed runs per network; the median is reported")
           ->capture_default_str();
       command.add_flag("--json", options->json, "print JSON instead of a table");
       command.callback([options] { run_bench(*options); });
     }});

}  // namespace
}  // namespace websd::app
