// `websd generate`: txt2img or img2img on the CPU, from a checkpoint folder (--model, run by the
// graph executor) or a compiled artifact (--artifact, run by the artifact runtime: `websd build`),
// written as PNG files that carry their generation parameters (A1111 "parameters" text chunk).
//
// Every input is checked before the model runs, and each image is written atomically, so a bad input
// or a failed run leaves an existing --out untouched. With --batch-count N > 1 the images are
// <stem>-0<ext>, <stem>-1<ext>, ... beside --out (out.png -> out-0.png, out-1.png), image i using
// seed + i. Existing outputs are replaced only with --force. Without --model the built-in demo model
// (tiny architecture, random weights) is used.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/artifact_options.h"
#include "app/command_registry.h"
#include "app/cpu_compute_options.h"
#include "app/model_options.h"
#include "app/number_ranges.h"
#include "app/prompt_file.h"
#include "app/vae_tiling_options.h"
#include "app/webgpu_node_runner.h"
#include "app/weight_cache_options.h"
#include "artifact/artifact.h"
#include "backends/artifact_backend.h"
#include "backends/artifact_model.h"
#include "backends/checkpoint_backend.h"
#include "core/error.h"
#include "import/checkpoint_tokenizer.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "io/output_paths.h"
#include "io/png_file.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "io/staged_files.h"
#include "pipeline/generation_request_json.h"
#include "pipeline/pipeline.h"
#include "pipeline/random/seed.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "pipeline/tokenizer/clip_tokenizer.h"
#include "tuning/apply_tuning.h"

namespace websd::app {
namespace {
namespace fs = std::filesystem;

struct GenerateOptions {
  ModelOptions model;
  std::string artifact;
  ArtifactAccessOptions access;
  GenerationParams params;
  std::string prompt_file, negative_prompt_file;  // read into params by read_prompt_files
  std::string seed = "-1";
  std::optional<std::string> scheduler;
  std::string scheduler_config;
  std::string init_image;
  std::optional<double> strength;
  std::string init_latents;
  std::optional<std::string> save_latents;
  std::string out;
  bool force = false;
  std::string tuning_db;
  WeightCacheOptions weight_cache;
  CpuComputeOptions compute;
  VaeTiling vae_tiling;
};

// out.png -> out-<index>.png when the run makes several images.
std::string output_path(const std::string& out, int index, int count) {
  if (count == 1) return out;
  const fs::path path(out);
  return (path.parent_path() / (path.stem().string() + "-" + std::to_string(index) + path.extension().string()))
      .string();
}

// Every file the run writes, checked together before the model loads (io/output_paths.h).
void check_output_paths(const GenerateOptions& options) {
  std::vector<OutputPath> outputs;
  for (int i = 0; i < std::max(1, options.params.batch_count); ++i) {
    outputs.push_back({"--out", output_path(options.out, i, options.params.batch_count), false, options.force});
  }
  if (options.save_latents) outputs.push_back({"--save-latents", *options.save_latents, false, options.force});
  std::vector<InputPath> inputs = model_inputs(options.model);
  const std::vector<InputPath> access = options.access.inputs();
  inputs.insert(inputs.end(), access.begin(), access.end());
  inputs.insert(inputs.end(),
                {{"--artifact", options.artifact},
                 {"--init-image", options.init_image},
                 {"--init-latents", options.init_latents},
                 {"--scheduler-config", options.scheduler_config},
                 {"--tuning-db", options.tuning_db},
                 {"--prompt-file", options.prompt_file == "-" ? "" : options.prompt_file},
                 {"--negative-prompt-file", options.negative_prompt_file == "-" ? "" : options.negative_prompt_file}});
  check_outputs("generate", outputs, inputs);
  // After the rules every output shares, so a device or an input at --out is named as such.
  const std::string extension = fs::path(options.out).extension().string();
  if (!options.out.empty() && extension != ".png" && extension != ".PNG") {
    throw Error("generate", "--out " + options.out + ": websd writes PNG images; name the file *.png");
  }
}

HostTensor read_init_latents(const std::string& path) {
  const SafetensorsFile file(path);
  if (file.entries().size() != 1) {
    throw Error("generate", "--init-latents " + path + ": holds " + std::to_string(file.entries().size()) +
                                " tensors, expected exactly one (as `websd noise` or --save-latents write)");
  }
  return file.read_f32(file.entries().front().name);
}

// The model's scheduler config: `config` (null if the model has none) read from `origin`.
std::unique_ptr<schedulers::Scheduler> make_scheduler(const GenerateOptions& options, const nlohmann::json& config,
                                                      const std::string& origin) {
  const std::string name = options.scheduler.value_or("");
  if (!options.scheduler_config.empty()) return schedulers::create_scheduler_from_file(options.scheduler_config, name);
  if (!config.is_null()) return schedulers::create_scheduler(config, name, origin);
  if (name.empty()) {
    throw Error("generate", origin + " does not exist (pass --scheduler NAME or --scheduler-config FILE)");
  }
  return schedulers::create_scheduler_by_name(name);
}

// Everything that can be checked without the model, so a typo fails at once.
void check_options(const GenerateOptions& options) {
  if (options.scheduler) {
    if (options.scheduler->empty()) {
      throw Error("generate", "--scheduler is empty (names: " + schedulers::join_names(schedulers::scheduler_names()) +
                                  "; leave it out for the model's own scheduler)");
    }
    schedulers::scheduler_class_for_name(*options.scheduler);
  }
  if (options.strength && options.init_image.empty()) {
    throw Error("generate", "--strength applies to img2img only (add --init-image PNG)");
  }
  if (!options.init_image.empty() && !options.init_latents.empty()) {
    throw Error("generate", "--init-image and --init-latents exclude each other (img2img starts from the image)");
  }
  check_output_paths(options);
  if (!options.model.model.empty() && !options.artifact.empty()) {
    throw Error("generate", "--model and --artifact exclude each other (an artifact already holds its model)");
  }
  const ImportOptions& import = options.model.import;
  if (!options.artifact.empty() && (!import.tokenizer_dir.empty() || !import.prediction_type.empty() ||
                                    !import.ldm_config.empty() || import.use_ema)) {
    throw Error("generate",
                "--tokenizer, --prediction-type, --config and --use-ema apply to --model; an artifact "
                "holds what they would set");
  }
  if (options.access.given() && options.artifact.empty()) {
    throw Error("generate", "--key-file and --trust-key apply to an --artifact only");
  }
  if (!options.tuning_db.empty() && !options.artifact.empty()) {
    throw Error("generate", "--tuning-db applies to --model; an artifact's kernels were tuned when it was built");
  }
  if (options.compute.given && !options.artifact.empty()) {
    throw Error("generate", "--dtype applies to --model; an artifact computes as it was built (websd build --dtype)");
  }
  if (!options.model.model.empty() && !fs::exists(options.model.model)) {
    throw Error("generate",
                "--model " + options.model.model +
                    ": no such file or folder (pass a diffusers model folder or a single-file .safetensors)");
  }
}

// Said once the request is known to be valid, so that a bad input gets its error line alone.
void print_notices(const GenerateOptions& options, const std::string& model_dir, const GenerationParams& params,
                   bool random_seed_chosen) {
  if (options.model.model.empty() && options.artifact.empty()) {
    std::cerr << "websd: no --model given: using the built-in DEMO model with RANDOM weights (" << model_dir
              << "); its images are noise patterns, not pictures. Pass --model DIR for a real checkpoint.\n";
  }
  if (random_seed_chosen) {
    std::cerr << "websd: random seed " << params.seed << " (pass --seed " << params.seed << " to repeat this run)\n";
  }
}

GenerationRequest build_request(const GenerateOptions& options) {
  GenerationRequest request;
  request.params = options.params;
  const std::optional<std::uint64_t> seed = parse_seed(options.seed, "--seed", "generate");
  request.params.seed = seed ? *seed : random_seed();
  if (options.strength) request.params.strength = *options.strength;
  if (!options.init_image.empty()) request.init_image = png_read_rgb(options.init_image);
  if (!options.init_latents.empty()) request.init_latents = read_init_latents(options.init_latents);
  request.vae_tiling = options.vae_tiling;
  return request;
}

// --prompt-file and --negative-prompt-file into the prompts; "-" (standard input) can be read once.
void read_prompt_files(GenerateOptions& options) {
  if (options.prompt_file == "-" && options.negative_prompt_file == "-") {
    throw CLI::ValidationError("--prompt-file and --negative-prompt-file cannot both read standard input (-)");
  }
  if (!options.prompt_file.empty()) {
    options.params.prompt = read_prompt_file("generate", "--prompt-file", options.prompt_file);
  }
  if (!options.negative_prompt_file.empty()) {
    options.params.negative_prompt =
        read_prompt_file("generate", "--negative-prompt-file", options.negative_prompt_file);
  }
}

// The bytes of the file the webgpu runner names under `key` of an image line.
std::string runner_file(const nlohmann::json& image, const char* key) {
  return input_file_read("generate", image.at(key).get<std::string>(), input_kinds::kRunnerOutput);
}

// --save-latents: every image's final latents [batch_count, C, h, w] (`shape` is one image's), staged.
void save_latents(StagedFiles& outputs, const std::string& path, const GenerationParams& params, Shape shape,
                  std::vector<float> values, std::vector<std::string>& written) {
  shape.at(0) = params.batch_count;
  const HostTensor latents(shape, std::move(values));
  safetensors_write_f32(outputs.stage(path), {{"latents", &latents}},
                        {{"seed", std::to_string(params.seed)}, {"steps", std::to_string(params.steps)}});
  written.push_back(path + " (latents " + shape_to_string(shape) + ")");
}

// A webgpu artifact: validated here as the other paths validate, run by the artifact's own
// WebAssembly runtime under Node (app/webgpu_node_runner.h), its images written here.
void run_webgpu_generate(const GenerateOptions& options, GenerationRequest request) {
  if (!options.access.key_file.empty()) {
    throw Error("generate", options.artifact +
                                " is a webgpu artifact: --key-file is not available for it (its WebAssembly runtime "
                                "reads no encrypted artifact; build it without --encrypt-key-file)");
  }
  // Opened here too: the seal and, with --trust-key, the signature are checked natively.
  artifact::ArtifactOpenOptions open_options = artifact::ArtifactOpenOptions::for_target("webgpu");
  open_options.trust_key_files = options.access.access().trust_key_files;
  const artifact::Artifact artifact = artifact::Artifact::open(options.artifact, open_options);
  const backends::ArtifactModel model = backends::read_artifact_model(artifact.section("model"), options.artifact);
  backends::choose_artifact_size(model.sizes, options.artifact, request.init_image || request.init_latents,
                                 request.params.width, request.params.height, "generate");
  constexpr const char* kSchedulerPath = "model/scheduler/scheduler_config.json";
  const std::vector<std::string> paths = artifact.file_paths();
  nlohmann::json config;
  if (std::find(paths.begin(), paths.end(), kSchedulerPath) != paths.end()) {
    const std::vector<std::byte> bytes = artifact.file_bytes(kSchedulerPath);
    config = json_parse(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        options.artifact + "/" + kSchedulerPath);
  }
  if (!options.scheduler_config.empty()) config = json_read_file(options.scheduler_config);
  const std::unique_ptr<schedulers::Scheduler> scheduler =
      make_scheduler(options, config, options.artifact + "/" + kSchedulerPath);
  request = validate_request(request, model.info, *scheduler);
  const GenerationParams& params = request.params;
  print_notices(options, options.artifact, params, !parse_seed(options.seed, "--seed", "generate"));

  nlohmann::json sent = generation_request_to_json(request);
  sent["scheduler"] = options.scheduler.value_or("");
  sent["scheduler_config"] = options.scheduler_config.empty() ? nlohmann::json() : config;
  // The init image or latents travel as raw files beside the request (web/node/websd_node.mjs).
  std::map<std::string, std::span<const std::byte>> files;
  if (request.init_image) {
    sent["init_image"] = {
        {"rgb", "init.rgb"}, {"width", request.init_image->width}, {"height", request.init_image->height}};
    files["init.rgb"] = std::as_bytes(std::span(request.init_image->pixels));
  }
  if (request.init_latents) {
    sent["init_latents"] = {{"f32", "init.f32"}, {"shape", request.init_latents->shape}};
    files["init.f32"] = std::as_bytes(std::span(request.init_latents->data));
  }
  StagedFiles outputs("generate");
  std::vector<std::string> written;
  std::vector<float> all_latents;
  Shape latent_shape;
  run_webgpu_node(
      "generate", "generate", options.artifact, options.access.tier, sent,
      [&](const nlohmann::json& line) {
        const nlohmann::json& image = line.at("image");
        RgbImage rgb;
        rgb.width = image.at("width").get<int>();
        rgb.height = image.at("height").get<int>();
        const std::string bytes = runner_file(image, "rgb");
        if (bytes.size() != static_cast<std::size_t>(rgb.width) * rgb.height * 3) {
          throw Error("generate", "the webgpu runner's image " + image.at("rgb").get<std::string>() + " has " +
                                      std::to_string(bytes.size()) + " bytes");
        }
        rgb.pixels.assign(bytes.begin(), bytes.end());
        const int index = image.at("index").get<int>();
        const std::string path = output_path(options.out, index, params.batch_count);
        png_write_rgb(outputs.stage(path), rgb, {{"parameters", image.at("parameters").get<std::string>()}});
        written.push_back(path + " (" + std::to_string(rgb.width) + "x" + std::to_string(rgb.height) + ", seed " +
                          image.at("seed").get<std::string>() + ")");
        latent_shape = image.at("latents_shape").get<Shape>();
        const std::string latents = runner_file(image, "latents");
        if (latents.size() != static_cast<std::size_t>(shape_numel(latent_shape)) * sizeof(float)) {
          throw Error("generate", "the webgpu runner's latents " + image.at("latents").get<std::string>() + " hold " +
                                      std::to_string(latents.size()) + " bytes");
        }
        const auto* values = reinterpret_cast<const float*>(latents.data());
        all_latents.insert(all_latents.end(), values, values + latents.size() / sizeof(float));
      },
      files);
  if (static_cast<int>(written.size()) != params.batch_count) {
    throw Error("generate", "the webgpu runner made " + std::to_string(written.size()) + " of " +
                                std::to_string(params.batch_count) + " images");
  }
  if (options.save_latents)
    save_latents(outputs, *options.save_latents, params, latent_shape, std::move(all_latents), written);
  outputs.commit();
  for (const std::string& line : written) std::cout << "wrote " << line << std::endl;
}

void run_generate(GenerateOptions options) {
  check_options(options);
  read_prompt_files(options);
  GenerationRequest request = build_request(options);
  if (!options.artifact.empty() && is_webgpu_artifact(options.artifact)) {
    run_webgpu_generate(options, std::move(request));
    return;
  }
  std::optional<tuning::TuningDb> tuning_db;
  if (!options.tuning_db.empty()) tuning_db = tuning::TuningDb::read_file(options.tuning_db);
  std::unique_ptr<DiffusionBackend> backend_owner;
  backends::CheckpointBackend* graph_backend = nullptr;
  std::string model_dir;
  std::optional<ClipTokenizer> tokenizer;
  nlohmann::json scheduler_config;
  std::string scheduler_origin;
  if (!options.artifact.empty()) {
    auto artifact = std::make_unique<backends::ArtifactBackend>(options.artifact, options.access.access());
    model_dir = options.artifact;
    tokenizer = artifact->tokenizer();
    scheduler_origin = artifact->scheduler_config_origin();
    scheduler_config = artifact->scheduler_config();
    // An artifact runs the sizes it was built for: the first is the default, another is refused now.
    backends::choose_artifact_size(artifact->sizes(), options.artifact, request.init_image || request.init_latents,
                                   request.params.width, request.params.height, "generate");
    backend_owner = std::move(artifact);
  } else {
    const std::shared_ptr<const DiffusersCheckpoint> checkpoint = open_model(options.model, "generate");
    model_dir = checkpoint->dir();
    tokenizer = checkpoint_tokenizer(*checkpoint);
    scheduler_config = checkpoint->scheduler_config();
    scheduler_origin = checkpoint->scheduler_config_origin().empty() ? model_dir + "/scheduler/scheduler_config.json"
                                                                     : checkpoint->scheduler_config_origin();
    auto graph = std::make_unique<backends::CheckpointBackend>(checkpoint, backends::Residency::kOneNetwork,
                                                               tuning_db ? &*tuning_db : nullptr);
    graph->compute_in(cpu_compute_dtype(options.compute.dtype, "generate"));
    if (auto cache = open_weight_cache(options.weight_cache, "generate")) graph->use_weight_cache(std::move(cache));
    graph_backend = graph.get();
    backend_owner = std::move(graph);
  }
  DiffusionBackend& backend = *backend_owner;
  const std::unique_ptr<schedulers::Scheduler> scheduler = make_scheduler(options, scheduler_config, scheduler_origin);
  request = validate_request(request, backend.info(), *scheduler);
  const GenerationParams& params = request.params;
  print_notices(options, model_dir, params, !parse_seed(options.seed, "--seed", "generate"));

  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  ProgressPrinter printer(std::cerr, terminal);
  std::vector<float> all_latents;
  Shape latent_shape;
  // All images and the latents appear together at the end, or none: a failure leaves --out as it was.
  StagedFiles outputs("generate");
  std::vector<std::string> written;
  Pipeline pipeline(backend, *tokenizer);
  pipeline.generate(
      request, *scheduler,
      [&](const GeneratedImage& result) {
        const std::string path = output_path(options.out, result.index, params.batch_count);
        png_write_rgb(outputs.stage(path), result.image, {{"parameters", result.parameters}});
        written.push_back(path + " (" + std::to_string(result.image.width) + "x" + std::to_string(result.image.height) +
                          ", seed " + std::to_string(result.seed) + ")");
        latent_shape = result.latents.shape;
        all_latents.insert(all_latents.end(), result.latents.data.begin(), result.latents.data.end());
      },
      [&printer](const ProgressEvent& event) { printer(event); });
  if (tuning_db && graph_backend != nullptr) {
    const backends::TuningCoverage coverage = graph_backend->tuning_coverage();
    std::cerr << tuning::tuning_summary(coverage.tuned, coverage.tunable, options.tuning_db) << "\n";
  }

  if (options.save_latents)
    save_latents(outputs, *options.save_latents, params, latent_shape, std::move(all_latents), written);
  outputs.commit();
  for (const std::string& line : written) std::cout << "wrote " << line << std::endl;
}

void add_options(CLI::App& command, GenerateOptions& options) {
  add_model_options(command, options.model,
                    "Diffusers model folder or single-file .safetensors checkpoint (default: the built-in demo model)",
                    false);
  command.add_option("--artifact", options.artifact, "A compiled artifact (websd build) to run instead of --model");
  add_artifact_access_options(command, options.access);
  CLI::Option* prompt = command.add_option("--prompt", options.params.prompt, "What to draw");
  CLI::Option* prompt_file = command.add_option(
      "--prompt-file", options.prompt_file,
      "Read the prompt from this UTF-8 file (- for standard input; one trailing newline is dropped), for text "
      "longer than a command line takes");
  CLI::Option* negative =
      command.add_option("--negative-prompt", options.params.negative_prompt, "What to steer away from");
  CLI::Option* negative_file = command.add_option("--negative-prompt-file", options.negative_prompt_file,
                                                  "Read the negative prompt from this UTF-8 file (as --prompt-file)");
  command.parse_complete_callback([prompt, prompt_file, negative, negative_file] {
    require_one_prompt_source(*prompt, *prompt_file, true);
    require_one_prompt_source(*negative, *negative_file, false);
  });
  command.add_option("--steps", options.params.steps, "Denoising steps")
      ->default_val(20)
      ->check(integer_range(1, std::numeric_limits<int>::max()));
  command.add_option("--guidance", options.params.guidance_scale, "Classifier-free guidance scale (<= 1: off)")
      ->default_val(7.5)
      ->check(number_range());
  command.add_option("--scheduler", options.scheduler,
                     "Scheduler name: " + schedulers::join_names(schedulers::scheduler_names()) +
                         " (default: the model's scheduler_config.json)");
  command.add_option("--scheduler-config", options.scheduler_config,
                     "A scheduler_config.json to use instead of the model's");
  command.add_option("--seed", options.seed,
                     "Seed: an integer from 0 to 2^64-1, or -1 (the default) for a random one, printed and recorded "
                     "in the PNG; image i uses seed + i");
  command.add_option("--width", options.params.width, "Image width, a multiple of 8 (default: the model's size)")
      ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
  command.add_option("--height", options.params.height, "Image height, a multiple of 8 (default: the model's size)")
      ->check(integer_range(1, std::numeric_limits<std::int64_t>::max()));
  command.add_option("--batch-count", options.params.batch_count, "Images to make: out-0.png, out-1.png, ...")
      ->default_val(1)
      ->check(integer_range(1, kMaxBatchCount));
  command.add_option("--init-image", options.init_image, "img2img: start from this PNG (RGB, RGBA or gray)");
  command.add_option("--strength", options.strength, "img2img: how much to repaint, in (0, 1] (default 0.8)")
      ->check(number_range());
  command.add_option("--init-latents", options.init_latents,
                     "txt2img: start from these standard-normal latents (safetensors, one tensor [N,4,h,w])");
  command.add_option("--save-latents", options.save_latents, "Write the final latents (tensor 'latents') here");
  command.add_option("--out", options.out, "Output PNG")->required();
  command.add_flag("--force", options.force, "Replace existing output files (--out, --save-latents)");
  command.add_option("--tuning-db", options.tuning_db,
                     "Tuning database (JSON lines, from `websd tune`): kernels with a record use its parameters");
  add_weight_cache_option(command, options.weight_cache);
  add_cpu_compute_option(command, options.compute);
  add_vae_tiling_options(command, options.vae_tiling);
}

const bool registered =
    register_command({"generate", "Generate images from a prompt (txt2img) or an init image (img2img) on the CPU",
                      [](CLI::App& command) {
                        auto options = std::make_shared<GenerateOptions>();
                        add_options(command, *options);
                        command.callback([options] { run_generate(*options); });
                      }});

}  // namespace
}  // namespace websd::app
