#include "compiler/cpu_artifact_build.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "artifact/artifact_key.h"
#include "artifact/artifact_writer.h"
#include "artifact/function_signatures.h"
#include "codegen/cpu_kernel_source.h"
#include "codegen/shared_library_compiler.h"
#include "core/error.h"
#include "cpu/cpu_executor.h"
#include "cpu/cpu_kernels.h"
#include "engine/component_weights.h"
#include "engine/cpu_backend.h"
#include "graph/module_merge.h"
#include "import/checkpoint_tokenizer.h"
#include "import/diffusers_checkpoint.h"
#include "io/interrupt_cleanup.h"
#include "io/json_file.h"
#include "models/graphs/sd_graphs.h"
#include "models/model_params.h"
#include "models/tokenizer_folder.h"
#include "passes/channels_last.h"
#include "passes/fuse_conv_residual.h"
#include "passes/fuse_elementwise.h"
#include "passes/fuse_norm_activation.h"
#include "passes/launch_lowering.h"
#include "passes/merge_qkv.h"
#include "passes/storage_dtype.h"
#include "passes/verify.h"
#include "pipeline/generation_params.h"
#include "tuning/apply_tuning.h"
#include "tuning/cpu_device.h"

namespace websd::compiler {
namespace fs = std::filesystem;
namespace {

constexpr const char* kKernelLibraryPath = "kernels/cpu_kernels.so";

struct Network {
  std::string component;  // checkpoint component whose weights it reads
  graph::Function function;
};

std::vector<std::byte> read_file_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw Error("build", "cannot read " + path);
  const std::string text((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  const auto* begin = reinterpret_cast<const std::byte*>(text.data());
  return {begin, begin + text.size()};
}

// FNV-1a of a packing layout: a short, stable tag for the artifact tensor holding that packing.
std::string layout_tag(const std::string& layout) {
  std::uint64_t hash = 1469598103934665603ull;
  for (const char c : layout) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

artifact::FunctionSignature signature_of(const graph::Function& function, std::size_t launches,
                                         std::int64_t arena_bytes) {
  artifact::FunctionSignature signature{function.symbol(), {}, {}, launches, static_cast<std::uint64_t>(arena_bytes)};
  for (const auto id : function.inputs()) {
    signature.inputs.push_back(
        {function.value(id).name, dtype_lower_name(function.value(id).type.dtype), function.value(id).type.shape});
  }
  for (std::size_t i = 0; i < function.outputs().size(); ++i) {
    const auto& value = function.value(function.outputs()[i]);
    signature.outputs.push_back({"output" + std::to_string(i), dtype_lower_name(value.type.dtype), value.type.shape});
  }
  return signature;
}

// The networks for one image size, merged into one module: the batch-1 variants are renamed by role.
graph::Module build_module(const ClipTextConfig& clip, const UNetConfig& unet, const VaeConfig& vae,
                           std::int64_t latent_h, std::int64_t latent_w, std::int64_t tokens,
                           std::map<std::string, std::string>& component_of) {
  const std::int64_t scale = std::int64_t{1} << (vae.block_count() - 1);
  struct Part {
    std::string origin, component;
    graph::Function function;
    std::string role;  // new symbol, or empty to keep the builder's
  };
  std::vector<Part> parts;
  parts.push_back({"text_encoder/config.json (batch 2)", "text_encoder", clip_text_graph(clip, 2, tokens), ""});
  parts.push_back({"text_encoder/config.json (batch 1)", "text_encoder", clip_text_graph(clip, 1, tokens), "clip_b1"});
  parts.push_back({"unet/config.json (batch 2)", "unet", unet_graph(unet, 2, latent_h, latent_w, tokens), ""});
  parts.push_back({"unet/config.json (batch 1)", "unet", unet_graph(unet, 1, latent_h, latent_w, tokens), "unet_b1"});
  parts.push_back({"vae/config.json (decoder)", "vae", vae_decode_graph(vae, 1, latent_h, latent_w), ""});
  parts.push_back(
      {"vae/config.json (encoder)", "vae", vae_encode_graph(vae, 1, latent_h * scale, latent_w * scale), ""});
  std::vector<graph::Module> modules(parts.size());
  std::vector<graph::ModuleSource> sources;
  graph::MergeOptions options;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string symbol = parts[i].function.symbol();
    modules[i].add_function(std::move(parts[i].function), parts[i].origin);
    sources.push_back({modules[i], parts[i].origin});
    options.rename_by_role.push_back({parts[i].origin, symbol, parts[i].role.empty() ? symbol : parts[i].role});
    component_of[parts[i].role.empty() ? symbol : parts[i].role] = parts[i].component;
  }
  return graph::merge_modules(sources, options);
}

void say(const CpuBuildOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

}  // namespace

passes::Pipeline cpu_build_pipeline(
    const tuning::TuningDb* tuning_db,
    std::function<void(const std::string& symbol, const std::vector<passes::WeightRecipe>&)> on_recipes,
    std::function<void(std::size_t tuned, std::size_t tunable)> on_tuning) {
  passes::Pipeline pipeline = passes::default_pipeline([](const std::string& op) { return cpu::cpu_supports(op); });
  pipeline.pop_back();  // its closing verify: ours comes after the CPU passes
  pipeline.push_back(
      {"channels_last", [](const graph::Function& f, passes::PassNotes&) { return passes::to_channels_last(f); }});
  pipeline.push_back({"fuse_conv_residual",
                      [](const graph::Function& f, passes::PassNotes&) { return passes::fuse_conv_residual(f); }});
  pipeline.push_back({"fuse_norm_activation",
                      [](const graph::Function& f, passes::PassNotes&) { return passes::fuse_norm_activation(f); }});
  pipeline.push_back({"merge_qkv", [on_recipes](const graph::Function& f, passes::PassNotes& notes) {
                        passes::MergeQkvResult merged = passes::merge_qkv(f);
                        if (!merged.recipes.empty()) {
                          notes.push_back("merged projections into " + std::to_string(merged.recipes.size()) +
                                          " weights");
                        }
                        on_recipes(f.symbol(), merged.recipes);
                        return std::move(merged.function);
                      }});
  pipeline.push_back(
      {"fuse_elementwise", [](const graph::Function& f, passes::PassNotes&) { return passes::fuse_elementwise(f); }});
  pipeline.push_back({"apply_tuning", [tuning_db, on_tuning](const graph::Function& f, passes::PassNotes&) {
                        tuning::TunedFunction tuned =
                            tuning::apply_tuning(f, tuning_db, "cpu", tuning::cpu_device_name());
                        on_tuning(tuned.tuned_count, tuned.tunable_count);
                        return std::move(tuned.function);
                      }});
  pipeline.push_back({"verify", [](const graph::Function& f, passes::PassNotes&) {
                        passes::verify(f);
                        return f;
                      }});
  return pipeline;
}

CpuBuildReport build_cpu_artifact(const CpuBuildOptions& options) {
  if (!passes::storage_dtype_supported(options.storage)) {
    throw Error("build",
                "--dtype " + dtype_lower_name(options.storage) + " is not a weight storage type (f32, f16 or bf16)");
  }
  // Opening the backend checks the folder, the configs against each other and every weight.
  const engine::CpuBackend checked(options.checkpoint);
  const ModelInfo& info = checked.info();
  const std::int64_t width = options.width > 0 ? options.width : info.sample_width * info.vae_scale_factor;
  const std::int64_t height = options.height > 0 ? options.height : info.sample_height * info.vae_scale_factor;
  check_image_size("build", width, height, info);
  const DiffusersCheckpoint& checkpoint = *options.checkpoint;
  const auto config_of = [&](const char* name) -> const CheckpointComponent& { return checkpoint.component(name); };
  const ClipTextConfig clip = clip_config_from_json(config_of("text_encoder").config(), "text_encoder/config.json");
  const UNetConfig unet = unet_config_from_json(config_of("unet").config(), "unet/config.json");
  const VaeConfig vae = vae_config_from_json(config_of("vae").config(), "vae/config.json");

  // The output and the key are checked before any compiling.
  artifact::ArtifactWriterOptions writer_options;
  if (options.key_file) writer_options.key = artifact::read_artifact_key(*options.key_file);
  artifact::ArtifactWriter writer(options.out, "cpu", std::move(writer_options));

  say(options, "building the networks for " + std::to_string(width) + "x" + std::to_string(height));
  std::map<std::string, std::string> component_of;
  const graph::Module module = build_module(clip, unet, vae, height / info.vae_scale_factor,
                                            width / info.vae_scale_factor, info.max_tokens, component_of);

  CpuBuildReport report;
  std::map<std::string, std::map<std::string, passes::WeightRecipe>> recipes;  // by symbol, then weight name
  std::string current_symbol;
  const passes::Pipeline pipeline = cpu_build_pipeline(
      options.tuning_db,
      [&](const std::string& symbol, const std::vector<passes::WeightRecipe>& made) {
        for (const auto& recipe : made) recipes[symbol][recipe.name] = recipe;
      },
      [&](std::size_t tuned, std::size_t tunable) {
        report.tuned += tuned;
        report.tunable += tunable;
      });
  std::vector<graph::Function> compiled;
  for (const graph::Function* function : module.functions()) {
    say(options, "compiling " + function->symbol() + " (" + std::to_string(function->nodes().size()) + " nodes)");
    passes::PipelineResult result = passes::run_pipeline(*function, pipeline, {options.dump_ir_dir});
    report.notes.insert(report.notes.end(), result.notes.begin(), result.notes.end());
    compiled.push_back(std::move(result.function));
  }

  // Generated kernels for every function's fused groups, in one shared library.
  graph::Module compiled_module;
  for (const auto& function : compiled) compiled_module.add_function(function, module.origin(function.symbol()));
  const std::vector<codegen::CpuKernelSpec> specs = codegen::cpu_kernel_specs(compiled_module);
  if (!specs.empty()) {
    say(options, "compiling " + std::to_string(specs.size()) + " generated kernels");
    const fs::path scratch = fs::temp_directory_path() / ("websd-build-" + std::to_string(::getpid()));
    const CleanupOnInterrupt cleanup(scratch.string());
    fs::create_directories(scratch);
    try {
      const codegen::SharedLibraryBuild library =
          codegen::compile_shared_library(codegen::cpu_kernel_source(specs), (scratch / "cpu_kernels.so").string());
      report.kernel_compile_seconds = library.compile_seconds;
      writer.add_file(kKernelLibraryPath, read_file_bytes(library.library_path));
    } catch (...) {
      fs::remove_all(scratch);
      throw;
    }
    fs::remove_all(scratch);
  }

  // Weights: each artifact tensor written once, in the form the kernels read.
  std::map<std::string, std::unique_ptr<engine::ComponentWeights>> weights_by_component;
  weights_by_component["text_encoder"] =
      std::make_unique<engine::ComponentWeights>(config_of("text_encoder"), param_specs(clip_text_params(clip)));
  weights_by_component["unet"] =
      std::make_unique<engine::ComponentWeights>(config_of("unet"), param_specs(unet_params(unet)));
  weights_by_component["vae"] =
      std::make_unique<engine::ComponentWeights>(config_of("vae"), param_specs(vae_params(vae)));
  std::set<std::string> written;
  nlohmann::json launch_lists = nlohmann::json::object();
  nlohmann::json memory_plans = nlohmann::json::array();
  std::vector<artifact::FunctionSignature> signatures;
  for (const auto& function : compiled) {
    const std::string& component = component_of.at(function.symbol());
    engine::ComponentWeights& source = *weights_by_component.at(component);
    say(options, "writing the weights of " + function.symbol());
    std::vector<runtime::LaunchWeight> placements;
    for (const auto id : function.weights()) {
      const graph::Value& value = function.value(id);
      const std::optional<cpu::WeightPacking> packing = cpu::cpu_weight_packing(function, id);
      runtime::LaunchWeight placement{component + "/" + value.name, packing ? packing->layout : "", value.type};
      if (packing) placement.name += "@" + layout_tag(packing->layout);
      placements.push_back(placement);
      if (!written.insert(placement.name).second) continue;
      const auto& symbol_recipes = recipes[function.symbol()];
      const auto recipe = symbol_recipes.find(value.name);
      std::vector<float> values = recipe == symbol_recipes.end()
                                      ? *source.get(function.symbol(), value.name, value.type.shape)
                                      : passes::weight_recipe_materialize(recipe->second, [&](const std::string& name) {
                                          const auto& spec = recipe->second.sources;
                                          const auto found = std::find_if(
                                              spec.begin(), spec.end(), [&](const auto& s) { return s.name == name; });
                                          return *source.get(function.symbol(), name, found->type.shape);
                                        });
      if (packing) values = packing->pack(values);
      source.release();
      const DType storage = passes::weight_storage_dtype(value.type, options.storage);
      const std::vector<std::byte> bytes = passes::storage_encode(values, storage);
      const Shape stored_shape = packing ? Shape{static_cast<std::int64_t>(values.size())} : value.type.shape;
      writer.add_weight(placement.name, stored_shape, storage, bytes);
      report.weight_count += 1;
      report.weight_bytes += bytes.size();
    }
    const passes::MemoryPlan plan = passes::plan_memory(function);
    const runtime::LaunchList list = passes::lower_to_launch_list(function, plan, std::move(placements));
    std::size_t generated = 0;
    for (const auto& launch : list.launches) generated += launch.kernel.empty() ? 0 : 1;
    report.functions.push_back({function.symbol(), list.launches.size(), generated, plan.unplanned_bytes,
                                plan.arena_bytes, plan.peak_live_bytes});
    launch_lists[function.symbol()] = runtime::launch_list_to_json(list);
    memory_plans.push_back({{"function", function.symbol()},
                            {"arena_bytes", plan.arena_bytes},
                            {"peak_bytes", plan.peak_live_bytes},
                            {"unplanned_bytes", plan.unplanned_bytes}});
    signatures.push_back(signature_of(function, list.launches.size(), plan.arena_bytes));
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& spec : specs) kernels.push_back({{"name", spec.name}, {"library", kKernelLibraryPath}});
  writer.set_section(std::string(artifact::kFunctionsSection), artifact::functions_section_to_json(signatures));
  writer.set_section("launch_lists", launch_lists);
  writer.set_section("memory_plans", memory_plans);
  writer.set_section("kernels", kernels);
  writer.set_section("model", {{"name", info.name},
                               {"latent_channels", info.latent_channels},
                               {"vae_scale_factor", info.vae_scale_factor},
                               {"vae_scaling_factor", info.vae_scaling_factor},
                               {"max_tokens", info.max_tokens},
                               {"sample_height", info.sample_height},
                               {"sample_width", info.sample_width},
                               {"latent_size_multiple", info.latent_size_multiple},
                               {"width", width},
                               {"height", height},
                               {"storage_dtype", dtype_lower_name(options.storage)},
                               {"device", tuning::cpu_device_name()}});
  // What the pipeline reads besides the networks: the tokenizer and the scheduler's config.
  const auto bytes_of = [](const std::string& text) {
    const auto* begin = reinterpret_cast<const std::byte*>(text.data());
    return std::vector<std::byte>(begin, begin + text.size());
  };
  for (const auto& [name, content] : checkpoint_tokenizer_files(checkpoint)) {
    writer.add_file("model/tokenizer/" + name, bytes_of(content));
  }
  if (!checkpoint.scheduler_config().is_null()) {
    writer.add_file("model/scheduler/scheduler_config.json", bytes_of(json_dump(checkpoint.scheduler_config(), 2)));
  }
  say(options, "writing the manifest");
  writer.finish();
  return report;
}

}  // namespace websd::compiler
