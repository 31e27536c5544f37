#include "compiler/build_artifact.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "artifact/artifact_key.h"
#include "artifact/artifact_writer.h"
#include "artifact/function_signatures.h"
#include "artifact/image_sizes.h"
#include "compiler/checkpoint_model.h"
#include "compiler/component_weights.h"
#include "core/error.h"
#include "graph/module_merge.h"
#include "graph/op_registry.h"
#include "import/checkpoint_tokenizer.h"
#include "import/diffusers_checkpoint.h"
#include "io/json_file.h"
#include "models/graphs/pipeline_helpers.h"
#include "models/graphs/sd_graphs.h"
#include "models/model_params.h"
#include "models/tokenizer_folder.h"
#include "passes/launch_lowering.h"
#include "passes/storage_dtype.h"
#include "pipeline/generation_params.h"
#include "pipeline/vae_decode_plan.h"

namespace websd::compiler {
namespace fs = std::filesystem;
namespace {

struct Network {
  std::string component;  // checkpoint component whose weights it reads
  graph::Function function;
};

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

// The networks for every image size, merged into one module: the text encoders once, the rest per
// size (artifact/image_sizes.h names them), the batch-1 variants renamed by role.
graph::Module build_module(const ClipTextConfig& clip, const UNetConfig& unet, const VaeConfig& vae,
                           const std::vector<artifact::ImageSize>& sizes, std::int64_t tokens,
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
  const artifact::ImageSize& first = sizes.front();
  // Decoders by latent shape: one for each size's whole image, and one of the tile's shape of the
  // default tiled decode (vae_decode_plan.h) for an image larger than one tile unless a decoder of
  // that shape is there already, so that `generate --artifact` can decode in tiles where the whole
  // decode does not fit (its backend picks any vae_decode* function of the tile's shape).
  std::set<std::pair<std::int64_t, std::int64_t>> decoders;
  for (const artifact::ImageSize& size : sizes) decoders.emplace(size.height / scale, size.width / scale);
  const std::int64_t tile = VaeTiling{}.tile_size / scale;
  std::optional<artifact::ImageSize> first_tile;
  for (const artifact::ImageSize& size : sizes) {
    const std::int64_t latent_h = size.height / scale, latent_w = size.width / scale;
    const std::string at = " at " + artifact::image_size_text(size) + ")";
    const auto role = [&](const std::string& name) { return artifact::sized_symbol(name, size, first); };
    parts.push_back(
        {"unet/config.json (batch 2" + at, "unet", unet_graph(unet, 2, latent_h, latent_w, tokens), role("unet")});
    parts.push_back(
        {"unet/config.json (batch 1" + at, "unet", unet_graph(unet, 1, latent_h, latent_w, tokens), role("unet_b1")});
    parts.push_back(
        {"unet/config.json (guided" + at, "unet", unet_cfg_graph(unet, latent_h, latent_w, tokens), role("unet_cfg")});
    parts.push_back(
        {"vae/config.json (decoder" + at, "vae", vae_decode_graph(vae, 1, latent_h, latent_w), role("vae_decode")});
    const std::int64_t tile_h = std::min(tile, latent_h), tile_w = std::min(tile, latent_w);
    if (decoders.emplace(tile_h, tile_w).second) {
      const artifact::ImageSize tile_size{tile_w * scale, tile_h * scale};
      if (!first_tile) first_tile = tile_size;
      parts.push_back({"vae/config.json (decoder, one tile of " + artifact::image_size_text(tile_size) + ")", "vae",
                       vae_decode_graph(vae, 1, tile_h, tile_w),
                       artifact::sized_symbol("vae_decode_tile", tile_size, *first_tile)});
    }
    parts.push_back({"vae/config.json (encoder" + at, "vae", vae_encode_graph(vae, 1, size.height, size.width),
                     role("vae_encode")});
    parts.push_back({"vae/config.json (image to RGBA" + at, "vae", image_to_rgba_graph(size.height, size.width),
                     role("image_to_rgba")});
  }
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

// The sizes asked for, checked, without repeats; none: the size the checkpoint's config states.
std::vector<artifact::ImageSize> image_sizes(const BuildOptions& options, const ModelInfo& info) {
  std::vector<artifact::ImageSize> sizes;
  for (artifact::ImageSize size : options.sizes) {
    if (size.width == 0) size.width = info.sample_width * info.vae_scale_factor;
    if (size.height == 0) size.height = info.sample_height * info.vae_scale_factor;
    check_image_size("build", size.width, size.height, info);
    if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) sizes.push_back(size);
  }
  if (sizes.empty()) {
    sizes.push_back({info.sample_width * info.vae_scale_factor, info.sample_height * info.vae_scale_factor});
  }
  return sizes;
}

// Every op the passes left must run on the target: named with its function when it does not.
void require_supported(const graph::Function& function, const Target& target) {
  for (const auto& node : function.nodes()) {
    const std::string& op = node.op->name;
    if (passes::lowers_to_view(op) || target.supports(op)) continue;
    throw Error("build", "function '" + function.symbol() + "' needs op '" + op + "', which the '" + target.name() +
                             "' target does not support");
  }
}

void say(const BuildOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

// The tiers to write, in the target's order with its base first; empty for a target without tiers.
// An unknown name: websd::Error("build") listing the target's.
std::vector<std::string> chosen_tiers(const BuildOptions& options, const Target& target) {
  const std::vector<TargetTier> offered = target.tiers();
  std::string names;
  for (const TargetTier& tier : offered) names += (names.empty() ? "" : ", ") + tier.name;
  for (const std::string& asked : options.tiers) {
    const bool known =
        std::any_of(offered.begin(), offered.end(), [&](const TargetTier& t) { return t.name == asked; });
    if (!known) {
      throw Error("build", "--tiers: the " + target.name() + " target has no tier '" + asked + "'" +
                               (offered.empty() ? " (it has none)" : " (it has " + names + ")"));
    }
  }
  std::vector<std::string> chosen;
  for (std::size_t i = 0; i < offered.size(); ++i) {
    const bool asked = std::find(options.tiers.begin(), options.tiers.end(), offered[i].name) != options.tiers.end();
    if (i == 0 || options.tiers.empty() || asked) chosen.push_back(offered[i].name);
  }
  return chosen;
}

TargetTier tier_named(const Target& target, const std::string& name) {
  for (const TargetTier& tier : target.tiers()) {
    if (tier.name == name) return tier;
  }
  return {name, "", true};
}

}  // namespace

BuildReport build_artifact(const BuildOptions& options, const Target& target) {
  if (!passes::storage_dtype_supported(options.storage)) {
    throw Error("build",
                "--dtype " + dtype_lower_name(options.storage) + " is not a weight storage type (f32, f16 or bf16)");
  }
  // The configs, checked against each other, then (ComponentWeights) every tensor against them.
  const DiffusersCheckpoint& checkpoint = *options.checkpoint;
  const compiler::CheckpointModel model = compiler::read_checkpoint_model(checkpoint);
  const ClipTextConfig& clip = model.clip;
  const UNetConfig& unet = model.unet;
  const VaeConfig& vae = model.vae;
  const ModelInfo& info = model.info;
  std::map<std::string, std::unique_ptr<compiler::ComponentWeights>> weights_by_component;
  weights_by_component["text_encoder"] = std::make_unique<compiler::ComponentWeights>(
      checkpoint.component("text_encoder"), param_specs(clip_text_params(clip)));
  weights_by_component["unet"] =
      std::make_unique<compiler::ComponentWeights>(checkpoint.component("unet"), param_specs(unet_params(unet)));
  weights_by_component["vae"] =
      std::make_unique<compiler::ComponentWeights>(checkpoint.component("vae"), param_specs(vae_params(vae)));
  const std::vector<artifact::ImageSize> sizes = image_sizes(options, info);

  // The output and the keys are checked before any compiling.
  artifact::ArtifactWriterOptions writer_options;
  if (options.key_file) writer_options.key = artifact::read_artifact_key(*options.key_file);
  if (options.sign_key_file) {
    writer_options.signing_key = std::make_shared<const artifact::ArtifactSigningKey>(
        artifact::ArtifactSigningKey::read(*options.sign_key_file));
  }
  for (const std::string& path : artifact::remove_abandoned_staging(options.out)) {
    say(options, "removed " + path + ", left by a build that was killed");
  }
  const std::vector<std::string> tiers = chosen_tiers(options, target);
  // What the target's runtime needs in the artifact, found before anything is compiled.
  const auto runtime_files = target.runtime_files();
  artifact::ArtifactWriter writer(options.out, target.name(), std::move(writer_options));

  say(options, "building the networks for " + artifact::image_sizes_text(sizes));
  std::map<std::string, std::string> component_of;
  const graph::Module module = build_module(clip, unet, vae, sizes, info.max_tokens, component_of);

  BuildReport report;
  std::map<std::string, std::map<std::string, passes::WeightRecipe>> recipes;  // by symbol, then weight name
  PassListHooks hooks;
  hooks.tuning_db = options.tuning_db;
  hooks.compute = options.compute;
  hooks.on_recipes = [&](const std::string& symbol, const std::vector<passes::WeightRecipe>& made) {
    for (const auto& recipe : made) recipes[symbol][recipe.name] = recipe;
  };
  hooks.on_tuning = [&](std::size_t tuned, std::size_t tunable) {
    report.tuned += tuned;
    report.tunable += tunable;
  };
  const passes::Pipeline pipeline = target.pass_list(hooks);
  std::vector<graph::Function> compiled;
  for (const graph::Function* function : module.functions()) {
    say(options, "compiling " + function->symbol() + " (" + std::to_string(function->nodes().size()) + " nodes)");
    passes::PipelineResult result = passes::run_pipeline(*function, pipeline, {options.dump_ir_dir});
    report.notes.insert(report.notes.end(), result.notes.begin(), result.notes.end());
    require_supported(result.function, target);
    compiled.push_back(std::move(result.function));
  }

  // The target's generated kernels for every function, in the files it chooses.
  graph::Module compiled_module;
  for (const auto& function : compiled) compiled_module.add_function(function, module.origin(function.symbol()));
  const GeneratedKernels kernels =
      target.generate_kernels(compiled_module, {tiers, options.cpu_arch}, options.progress);
  report.kernel_compile_seconds = kernels.compile_seconds;
  for (const auto& [path, bytes] : kernels.files) writer.add_file(path, bytes);
  for (const auto& [path, bytes] : runtime_files) writer.add_file(path, bytes);

  // Weights: each artifact tensor written once, in the form the kernels read.
  std::set<std::string> written;
  nlohmann::json launch_lists = nlohmann::json::object();
  std::vector<runtime::LaunchList> lowered;
  // The other tiers' lowerings of the same functions (same values and weights), by tier.
  nlohmann::json tier_launch_lists = nlohmann::json::object();
  std::map<std::string, std::vector<runtime::LaunchList>> tier_lowered;
  nlohmann::json memory_plans = nlohmann::json::array();
  std::vector<artifact::FunctionSignature> signatures;
  for (const auto& function : compiled) {
    const std::string& component = component_of.at(function.symbol());
    compiler::ComponentWeights& source = *weights_by_component.at(component);
    say(options, "writing the weights of " + function.symbol());
    std::vector<runtime::LaunchWeight> placements;
    for (const auto id : function.weights()) {
      const graph::Value& value = function.value(id);
      const std::optional<WeightLayout> packing = target.weight_layout(function, id);
      runtime::LaunchWeight placement{component + "/" + value.name, packing ? packing->name : "", value.type};
      if (packing) placement.name.append("@").append(layout_tag(packing->name));
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
    const passes::MemoryPlan plan = passes::plan_memory(function, target.memory_limits());
    const auto lower_in = [&](const std::string& tier) {
      return passes::lower_to_launch_list(function, plan, placements,
                                          [&target, &tier](const graph::Function& f, const graph::Node& node) {
                                            return target.lower_node(f, node, tier);
                                          });
    };
    const runtime::LaunchList list = lower_in(tiers.empty() ? std::string() : tiers.front());
    for (std::size_t t = 1; t < tiers.size(); ++t) {
      runtime::LaunchList tiered = lower_in(tiers[t]);
      tier_launch_lists[tiers[t]][function.symbol()] = runtime::launch_list_to_json(tiered);
      tier_lowered[tiers[t]].push_back(std::move(tiered));
    }
    std::size_t generated = 0;
    for (const auto& launch : list.launches) generated += list.kernel_of(launch).source == "file" ? 1 : 0;
    report.functions.push_back({function.symbol(), list.launches.size(), generated, plan.unplanned_bytes,
                                plan.arena_bytes, plan.peak_live_bytes});
    launch_lists[function.symbol()] = runtime::launch_list_to_json(list);
    lowered.push_back(list);
    memory_plans.push_back({{"function", function.symbol()},
                            {"arena_bytes", plan.arena_bytes},
                            {"arenas", plan.arenas},
                            {"peak_bytes", plan.peak_live_bytes},
                            {"unplanned_bytes", plan.unplanned_bytes}});
    signatures.push_back(signature_of(function, list.launches.size(), plan.arena_bytes));
  }
  nlohmann::json kernel_section = nlohmann::json::array();
  for (const auto& [name, file] : kernels.kernels) {
    nlohmann::json entry = {{"name", name}, {"library", file}};
    if (const auto source = kernels.sources.find(file); source != kernels.sources.end())
      entry["source"] = source->second;
    kernel_section.push_back(std::move(entry));
  }
  writer.set_section(std::string(artifact::kFunctionsSection), artifact::functions_section_to_json(signatures));
  writer.set_section("launch_lists", launch_lists);
  writer.set_section("memory_plans", memory_plans);
  writer.set_section("kernels", kernel_section);
  nlohmann::json requirements = target.device_requirements(lowered, tiers.empty() ? "" : tiers.front());
  if (kernels.requirements.is_object()) {
    if (requirements.is_null()) requirements = nlohmann::json::object();
    requirements.update(kernels.requirements);
  }
  if (!requirements.is_null()) writer.set_section("device_requirements", std::move(requirements));
  if (!tiers.empty()) {
    // Every tier written, the base first, with what a device must offer to run it (the base's:
    // the device_requirements section); the runtime takes the best one the device offers (or the
    // one asked for) and its lists from tier_launch_lists (the base's are launch_lists).
    nlohmann::json tier_section = nlohmann::json::array();
    for (const std::string& tier : tiers) {
      const TargetTier described = tier_named(target, tier);
      nlohmann::json entry = {{"name", tier}, {"summary", described.summary}, {"automatic", described.automatic}};
      if (tier != tiers.front()) entry["device_requirements"] = target.device_requirements(tier_lowered[tier], tier);
      tier_section.push_back(std::move(entry));
    }
    writer.set_section("tiers", std::move(tier_section));
    writer.set_section("tier_launch_lists", std::move(tier_launch_lists));
  }
  nlohmann::json sizes_json = nlohmann::json::array();
  for (const artifact::ImageSize& size : sizes) sizes_json.push_back({{"width", size.width}, {"height", size.height}});
  writer.set_section("model", {{"name", info.name},
                               {"latent_channels", info.latent_channels},
                               {"vae_scale_factor", info.vae_scale_factor},
                               {"vae_scaling_factor", info.vae_scaling_factor},
                               {"max_tokens", info.max_tokens},
                               {"sample_height", info.sample_height},
                               {"sample_width", info.sample_width},
                               {"latent_size_multiple", info.latent_size_multiple},
                               {"width", sizes.front().width},
                               {"height", sizes.front().height},
                               {"sizes", sizes_json},
                               {"storage_dtype", dtype_lower_name(options.storage)},
                               {"device", target.device_name()}});
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
