// `websd inspect ART [--json] [--verify] [--key-file K] [--trust-key P]`: what an artifact holds:
// target and versions, functions with their signatures, kernels, memory plans, weights (count,
// bytes per dtype, shards, encryption) and its protections (digest, key, signature). Opening
// checks the seal, the manifest, index and shard sizes. --verify runs
// every check that `websd generate --artifact` runs when it loads the artifact and calls its
// functions, plus reading every byte: the SHA-256 of every weight shard (decrypted with the key)
// and of every file the manifest lists (the kernel library, the model's tokenizer and scheduler
// files); the load itself (backends::ArtifactBackend: model section, launch lists, kernel library);
// each function's executor with its weights bound (kernels present, generated kernels' operand
// shapes, weights present with their sizes and packings) and its input and output types against
// what the model section makes generate pass; the tokenizer and the scheduler.
// `websd inspect ART --source KERNEL` prints the source the artifact keeps of one kernel (of the
// `kernels` section): a WGSL module, or a fused group's part of the CPU library's generated C++.

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/artifact_options.h"
#include "app/command_registry.h"
#include "artifact/artifact.h"
#include "artifact/function_signatures.h"
#include "artifact/image_sizes.h"
#include "backends/artifact_backend.h"
#include "core/byte_size_text.h"
#include "core/error.h"
#include "core/utf8.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "runtime/artifact_weight_source.h"
#include "runtime/executor.h"
#include "runtime/launch_list.h"
#include "targets/cpu/codegen/cpu_kernel_source.h"
#include "targets/device_registry.h"

namespace websd::app {
namespace {

using nlohmann::ordered_json;

struct InspectOptions {
  std::string artifact;
  ArtifactAccessOptions access;
  bool json = false;
  bool verify = false;
  std::string source;  // --source KERNEL
};

// The kernels section is the compiler's: a list of {name, ...} objects (or of names) is
// summarised by name; any other layout is only counted as unrecognised.
ordered_json summarise_kernels(const nlohmann::json* section) {
  if (section == nullptr) return nullptr;
  ordered_json names = ordered_json::array();
  if (section->is_array()) {
    for (const auto& kernel : *section) {
      if (kernel.is_string())
        names.push_back(kernel.get<std::string>());
      else if (kernel.is_object() && kernel.contains("name") && kernel["name"].is_string())
        names.push_back(kernel["name"].get<std::string>());
      else
        return {{"count", section->size()}, {"names", nullptr}};
    }
    return {{"count", names.size()}, {"names", names}};
  }
  return {{"count", nullptr}, {"names", nullptr}};
}

// memory_plans: a list of {function, arena_bytes, peak_bytes[, unplanned_bytes]}; integer fields
// that are present are reported, anything else is left out.
ordered_json summarise_memory_plans(const nlohmann::json* section) {
  ordered_json plans = ordered_json::array();
  if (section == nullptr || !section->is_array()) return plans;
  for (const auto& plan : *section) {
    if (!plan.is_object()) continue;
    ordered_json summary;
    const bool named = plan.contains("function") && plan["function"].is_string();
    summary["function"] = named ? plan["function"].get<std::string>() : std::string("?");
    for (const char* key : {"arena_bytes", "peak_bytes", "unplanned_bytes"}) {
      if (plan.contains(key) && plan[key].is_number_unsigned()) summary[key] = plan[key].get<std::uint64_t>();
    }
    plans.push_back(std::move(summary));
  }
  return plans;
}

ordered_json summarise_weights(const artifact::Artifact& artifact) {
  std::uint64_t total = 0;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> by_dtype;  // count, bytes
  for (const auto& entry : artifact.weights()) {
    total += entry.bytes;
    auto& [count, bytes] = by_dtype[std::string(artifact::weight_dtype_name(entry.dtype))];
    ++count;
    bytes += entry.bytes;
  }
  ordered_json dtypes = ordered_json::object();
  for (const auto& [dtype, stats] : by_dtype) dtypes[dtype] = {{"count", stats.first}, {"bytes", stats.second}};
  std::uint64_t stored = 0;
  for (const auto& shard : artifact.shards()) stored += shard.bytes;
  return {
      {"count", artifact.weights().size()}, {"bytes", total},        {"by_dtype", dtypes},
      {"shards", artifact.shards().size()}, {"shard_bytes", stored}, {"encryption", artifact.manifest().encryption}};
}

// What protects the artifact and what opening it checked (FORMAT.md, "Protections").
ordered_json summarise_protections(const artifact::Artifact& artifact) {
  const artifact::ArtifactProtections& protections = artifact.protections();
  ordered_json summary;
  summary["manifest_sha256"] = protections.manifest_sha256;
  summary["encryption"] = artifact.manifest().encryption;
  summary["key_authenticated"] = protections.key_authenticated;
  if (protections.signer) {
    summary["signature"] = {{"signer", *protections.signer},
                            {"verified", protections.signature_checked},
                            {"trusted", protections.signer_trusted}};
  } else {
    summary["signature"] = nullptr;
  }
  return summary;
}

// The image sizes generate runs, the default first, as the model section lists them: shown as
// they are (--verify judges them), none when the section holds no well-formed list or size.
nlohmann::json summarise_sizes(const nlohmann::json* model) {
  nlohmann::json sizes = nlohmann::json::array();
  if (model == nullptr || !model->is_object()) return sizes;
  const auto is_size = [](const nlohmann::json& size) {
    return size.is_object() && size.value("width", nlohmann::json()).is_number_integer() &&
           size.value("height", nlohmann::json()).is_number_integer();
  };
  const nlohmann::json listed = model->value("sizes", nlohmann::json::array({*model}));
  if (!listed.is_array()) return sizes;
  for (const auto& size : listed) {
    if (is_size(size)) sizes.push_back({{"width", size.at("width")}, {"height", size.at("height")}});
  }
  return sizes;
}

// The kernel tiers (manifest section `tiers`): each with its features, the WGSL (or other
// kernel) files its launch lists name, counted and summed from the `files` section, and the bytes
// its weights take on the device (in the dtype its lists hold them in: f16 or f32). Null for an artifact of one
// lowering.
ordered_json summarise_tiers(const artifact::Artifact& artifact) {
  const nlohmann::json* tiers = artifact.section("tiers");
  if (tiers == nullptr || !tiers->is_array()) return nullptr;
  std::map<std::string, std::uint64_t> file_bytes;
  if (const nlohmann::json* files = artifact.section("files"); files != nullptr && files->is_array()) {
    for (const auto& file : *files) {
      if (file.is_object() && file.contains("path") && file["path"].is_string() && file.contains("bytes") &&
          file["bytes"].is_number_unsigned()) {
        file_bytes[file["path"].get<std::string>()] = file["bytes"].get<std::uint64_t>();
      }
    }
  }
  const nlohmann::json* base_lists = artifact.section("launch_lists");
  const nlohmann::json* tier_lists = artifact.section("tier_launch_lists");
  ordered_json summary = ordered_json::array();
  for (std::size_t i = 0; i < tiers->size(); ++i) {
    const nlohmann::json& tier = (*tiers)[i];
    if (!tier.is_object() || !tier.contains("name") || !tier["name"].is_string()) continue;
    const std::string name = tier["name"].get<std::string>();
    const nlohmann::json* lists = i == 0 ? base_lists
                                  : tier_lists != nullptr && tier_lists->is_object() && tier_lists->contains(name)
                                      ? &(*tier_lists)[name]
                                      : nullptr;
    std::set<std::string> files;
    std::map<std::string, std::uint64_t> device_weights;  // by artifact tensor
    // A denoising step's dispatches: the guided UNet's launches (unet_cfg; an artifact without it
    // runs unet twice).
    nlohmann::json step_dispatches = nullptr;
    if (lists != nullptr && lists->is_object()) {
      for (const char* symbol : {"unet_cfg", "unet"}) {
        if (!step_dispatches.is_null() || !lists->contains(symbol)) continue;
        const nlohmann::json& list = (*lists)[symbol];
        if (list.is_object() && list.contains("launches") && list["launches"].is_array()) {
          step_dispatches = {{"function", symbol}, {"launches", list["launches"].size()}};
        }
      }
      for (const auto& [symbol, list] : lists->items()) {
        try {
          for (const auto& weight : runtime::launch_list_from_json(list).weights) {
            device_weights[weight.name] = std::max(device_weights[weight.name], runtime::value_bytes(weight.type));
          }
        } catch (const Error&) {
          // A list the runtime would refuse: its load says why; here it adds no bytes.
        }
        if (!list.is_object() || !list.contains("kernels") || !list["kernels"].is_array()) continue;
        for (const auto& kernel : list["kernels"]) {
          if (kernel.is_object() && kernel.contains("file") && kernel["file"].is_string()) files.insert(kernel["file"]);
        }
      }
    }
    std::uint64_t bytes = 0;
    for (const std::string& file : files) bytes += file_bytes.count(file) ? file_bytes[file] : 0;
    // The base tier's needs are the device_requirements section's.
    const nlohmann::json* base_needs = artifact.section("device_requirements");
    const nlohmann::json needs = i == 0 ? (base_needs != nullptr ? *base_needs : nlohmann::json::object())
                                        : tier.value("device_requirements", nlohmann::json::object());
    ordered_json entry;
    entry["name"] = name;
    entry["features"] = needs.is_object() ? needs.value("features", nlohmann::json::array()) : nlohmann::json::array();
    entry["automatic"] = tier.value("automatic", true);
    entry["kernel_files"] = files.size();
    entry["kernel_bytes"] = bytes;
    std::uint64_t weight_bytes = 0;
    for (const auto& [tensor, size] : device_weights) weight_bytes += size;
    entry["device_weight_bytes"] = weight_bytes;
    entry["step_dispatches"] = step_dispatches;
    entry["summary"] = tier.value("summary", "");
    summary.push_back(std::move(entry));
  }
  return summary;
}

ordered_json summarise(const artifact::Artifact& artifact) {
  const auto& manifest = artifact.manifest();
  ordered_json summary;
  summary["artifact"] = utf8_or_escaped(artifact.dir());
  summary["target"] = manifest.target;
  summary["format_version"] = manifest.format_version;
  summary["websd_version"] = manifest.websd_version;
  summary["created"] = manifest.created;
  summary["sections"] = artifact.section_names();
  summary["image_sizes"] = summarise_sizes(artifact.section("model"));
  const nlohmann::json* functions = artifact.section(artifact::kFunctionsSection);
  summary["functions"] = functions == nullptr
                             ? nlohmann::json::array()
                             : artifact::functions_section_to_json(artifact::parse_functions_section(
                                   *functions, artifact.dir() + "/" + std::string(artifact::kManifestFileName)));
  summary["kernels"] = summarise_kernels(artifact.section("kernels"));
  summary["tiers"] = summarise_tiers(artifact);
  summary["memory_plans"] = summarise_memory_plans(artifact.section("memory_plans"));
  summary["weights"] = summarise_weights(artifact);
  summary["protections"] = summarise_protections(artifact);
  return summary;
}

void print_row(const std::string& label, const std::string& value) {
  std::printf("%-11s %s\n", label.c_str(), value.c_str());
}

std::string signature_list(const ordered_json& tensors) {
  std::string text = "(";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    artifact::TensorSignature tensor{tensors[i]["name"], tensors[i]["dtype"], tensors[i]["shape"].get<Shape>()};
    text += (i == 0 ? "" : ", ") + artifact::tensor_signature_to_string(tensor);
  }
  return text + ")";
}

void print_text(const ordered_json& summary) {
  print_row("artifact", summary["artifact"].get<std::string>());
  print_row("target", summary["target"].get<std::string>());
  print_row("format", std::to_string(summary["format_version"].get<std::int64_t>()) + " (written by websd " +
                          summary["websd_version"].get<std::string>() + ")");
  print_row("created", summary["created"].get<std::string>());
  std::string sections;
  for (const auto& name : summary["sections"]) sections += (sections.empty() ? "" : ", ") + name.get<std::string>();
  print_row("sections", sections.empty() ? "(none)" : sections);
  std::string sizes;
  for (const auto& size : summary["image_sizes"]) {
    sizes += (sizes.empty() ? "" : ", ") + artifact::image_size_text({size["width"], size["height"]}) +
             (sizes.empty() ? " (default)" : "");
  }
  if (!sizes.empty()) print_row("sizes", sizes);

  const auto& functions = summary["functions"];
  print_row("functions", std::to_string(functions.size()));
  for (const auto& function : functions) {
    std::printf("  %-19s %s -> %s\n  %-19s launches %llu, arena %s\n", function["symbol"].get<std::string>().c_str(),
                signature_list(function["inputs"]).c_str(), signature_list(function["outputs"]).c_str(), "",
                static_cast<unsigned long long>(function["launches"].get<std::uint64_t>()),
                human_bytes(function["arena_bytes"].get<std::uint64_t>()).c_str());
  }

  const auto& kernels = summary["kernels"];
  if (kernels.is_null()) {
    print_row("kernels", "(none)");
  } else if (kernels["names"].is_null()) {
    print_row("kernels", kernels["count"].is_null() ? "(unrecognised layout)"
                                                    : std::to_string(kernels["count"].get<std::size_t>()));
  } else {
    print_row("kernels", std::to_string(kernels["count"].get<std::size_t>()));
    for (const auto& name : kernels["names"]) std::printf("  %s\n", name.get<std::string>().c_str());
  }

  const auto& tiers = summary["tiers"];
  if (!tiers.is_null()) {
    print_row("tiers", std::to_string(tiers.size()) + " (the runtime takes the best one the device offers)");
    for (const auto& tier : tiers) {
      std::string features;
      for (const auto& f : tier["features"]) features += (features.empty() ? "" : ", ") + f.get<std::string>();
      const auto& step = tier["step_dispatches"];
      const std::string dispatches = step.is_null()
                                         ? ""
                                         : ", " + std::to_string(step["launches"].get<std::uint64_t>()) +
                                               " dispatches a step (" + step["function"].get<std::string>() + ")";
      std::printf("  %-19s %llu kernel files, %s, weights %s on the device%s; needs %s%s\n",
                  tier["name"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(tier["kernel_files"].get<std::uint64_t>()),
                  human_bytes(tier["kernel_bytes"].get<std::uint64_t>()).c_str(),
                  human_bytes(tier["device_weight_bytes"].get<std::uint64_t>()).c_str(), dispatches.c_str(),
                  features.empty() ? "no optional features" : features.c_str(),
                  tier["automatic"].get<bool>() ? "" : "; only when asked (--tier)");
    }
  }

  const auto& plans = summary["memory_plans"];
  print_row("memory", plans.empty() ? "(no plans)" : std::to_string(plans.size()) + " plan(s)");
  for (const auto& plan : plans) {
    std::string line;
    for (const auto& [key, label] :
         {std::pair{"arena_bytes", "arena"}, {"peak_bytes", "peak"}, {"unplanned_bytes", "unplanned"}}) {
      if (plan.contains(key)) line += std::string(line.empty() ? "" : ", ") + label + " " + human_bytes(plan[key]);
    }
    std::printf("  %-14s %s\n", plan["function"].get<std::string>().c_str(), line.c_str());
  }

  const auto& weights = summary["weights"];
  const std::string encryption = weights["encryption"].get<std::string>();
  print_row("weights", std::to_string(weights["count"].get<std::size_t>()) + " tensors, " +
                           human_bytes(weights["bytes"].get<std::uint64_t>()) + " in " +
                           std::to_string(weights["shards"].get<std::size_t>()) + " shard(s), " +
                           (encryption == "none" ? std::string("not encrypted") : "encrypted (" + encryption + ")"));
  for (const auto& [dtype, stats] : weights["by_dtype"].items()) {
    const auto count = stats["count"].get<std::size_t>();
    std::printf("  %-14s %zu tensor%s, %s\n", dtype.c_str(), count, count == 1 ? "" : "s",
                human_bytes(stats["bytes"].get<std::uint64_t>()).c_str());
  }
  const auto& protections = summary["protections"];
  print_row("digest", "SHA-256 " + protections["manifest_sha256"].get<std::string>() +
                          " of the manifest, which covers every file");
  if (protections["encryption"] == "none") {
    print_row("key", "none: not encrypted, so whoever can edit the files can also recompute the digest");
  } else {
    print_row("key", protections["key_authenticated"].get<bool>()
                         ? "the manifest is authenticated by the key (--key-file)"
                         : "encrypted; the manifest's authentication by the key was not checked (pass --key-file)");
  }
  const auto& signature = protections["signature"];
  if (signature.is_null()) {
    print_row("signature", "none (sign with 'websd build --sign-key K')");
  } else {
    const std::string signer = signature["signer"].get<std::string>();
    print_row("signature", signature["trusted"].get<bool>() ? "by " + signer + ", a trusted key (--trust-key)"
                           : signature["verified"].get<bool>()
                               ? "by " + signer + ", valid; the signer was not checked (pass --trust-key P)"
                               : "by " + signer + ", not checked (this build cannot check signatures)");
  }
  if (summary.contains("verified")) {
    const auto& verified = summary["verified"];
    print_row("verified", std::to_string(verified["shards_hashed"].get<std::size_t>()) + " shard(s) and " +
                              std::to_string(verified["files_hashed"].get<std::size_t>()) +
                              " file(s) match their SHA-256; every check 'websd generate --artifact' runs at load "
                              "passed");
  }
}

// --- --verify ---------------------------------------------------------------------------------

constexpr const char* kEditedFix = "the manifest was edited or is corrupt: rebuild the artifact";

[[noreturn]] void verify_fail(const std::string& dir, const std::string& what) {
  throw Error("artifact", dir + ": " + what);
}

// Every weight shard's and every listed file's SHA-256. Returns the number of shards and files.
std::pair<std::size_t, std::size_t> verify_checksums(const artifact::Artifact& artifact) {
  for (std::size_t i = 0; i < artifact.shards().size(); ++i) {
    artifact.verify_shard(i);
    artifact.release_shard(i);  // one shard resident at a time (decrypted ones are held in memory)
  }
  std::size_t files = 0;
  if (const nlohmann::json* listed = artifact.section(artifact::kFilesSection); listed != nullptr) {
    for (const auto& file : *listed) {  // its form was checked by Artifact::open
      artifact.file_bytes(file.at("path").get<std::string>());
      ++files;
    }
  }
  return {artifact.shards().size(), files};
}

// What backends::ArtifactBackend's executor() does for `list` when generate first calls it, without
// running it: the executor is made on the device registered for the artifact's target (on the CPU:
// every launch's kernel in this CPU target or the verified kernel library, operand types and shapes
// checked) and every weight is bound (present in the index, of the size the list wants, in this
// CPU's packing).
void verify_executor(const artifact::Artifact& artifact, runtime::Device& device, const runtime::LaunchList& list) {
  runtime::Executor executor(device, list, runtime::artifact_kernel_files(artifact));
  runtime::ArtifactWeightSource weights(artifact);
  executor.bind_weights(weights);
  artifact.release_weight_pages();
}

std::string types_text(const std::vector<TensorType>& types) {
  std::string text;
  for (const auto& type : types) text += (text.empty() ? "" : ", ") + type.to_string();
  return "(" + text + ")";
}

// The types generate passes to and expects from each function, from the model section, against
// the ones the function was built for (what ArtifactBackend::check_shapes, Executor::set_input and
// the pipeline check at every call).
void verify_signatures(const std::string& dir, const std::map<std::string, runtime::LaunchList>& lists,
                       const backends::ArtifactBackend& backend) {
  const ModelInfo& info = backend.info();
  const std::vector<artifact::ImageSize>& sizes = backend.sizes();
  const std::string facts = "model section (latent_channels " + std::to_string(info.latent_channels) +
                            ", vae_scale_factor " + std::to_string(info.vae_scale_factor) + ", max_tokens " +
                            std::to_string(info.max_tokens) + ", sizes " + artifact::image_sizes_text(sizes) + ")";
  for (const auto& [name, value] : {std::pair{"latent_channels", info.latent_channels},
                                    {"vae_scale_factor", info.vae_scale_factor},
                                    {"max_tokens", info.max_tokens}}) {
    if (value <= 0) {
      verify_fail(dir, std::string("the model section's ") + name + " is " + std::to_string(value) +
                           ", expected a positive integer (" + kEditedFix + ")");
    }
  }
  for (const artifact::ImageSize& size : sizes) {
    if (size.width <= 0 || size.height <= 0) {
      verify_fail(dir, "the model section holds the size " + artifact::image_size_text(size) +
                           ", expected positive integers (" + kEditedFix + ")");
    }
  }
  // Each call generate makes, for every size: with guidance (batch 2), without (batch 1), decoding,
  // img2img's encoding, RGBA.
  struct Call {
    std::string symbol;
    std::vector<TensorType> inputs, outputs;
  };
  std::vector<Call> calls;
  const auto f32 = [](Shape shape) { return TensorType{DType::kF32, std::move(shape)}; };
  const auto types_of = [](const runtime::LaunchList& list, const std::vector<std::int32_t>& ids) {
    std::vector<TensorType> types;
    for (const auto id : ids) types.push_back(list.values[id].type);
    return types;
  };
  const auto require = [&](const std::string& symbol) {
    if (lists.find(symbol) == lists.end()) {
      verify_fail(dir, "has no function '" + symbol + "', which generate calls (" + kEditedFix + ")");
    }
  };
  require("clip");
  require("clip_b1");
  const std::vector<TensorType> clip_out = types_of(lists.at("clip"), lists.at("clip").outputs);
  const std::int64_t hidden = clip_out.size() == 1 && clip_out[0].rank() == 3 ? clip_out[0].shape[2] : -1;
  for (const std::int64_t batch : {2, 1}) {
    calls.push_back({batch == 2 ? "clip" : "clip_b1",
                     {TensorType{DType::kI64, {batch, info.max_tokens}}},
                     {f32({batch, info.max_tokens, hidden})}});
  }
  for (const artifact::ImageSize& size : sizes) {
    const auto symbol = [&](const std::string& role) {
      const std::string sized = artifact::sized_symbol(role, size, sizes.front());
      require(sized);
      return sized;
    };
    const std::int64_t latent_h = size.height / info.vae_scale_factor, latent_w = size.width / info.vae_scale_factor;
    for (const std::int64_t batch : {2, 1}) {
      const TensorType latents = f32({batch, info.latent_channels, latent_h, latent_w});
      calls.push_back({symbol(batch == 2 ? "unet" : "unet_b1"),
                       {latents, f32({batch}), f32({batch, info.max_tokens, hidden})},
                       {latents}});
    }
    const TensorType latent = f32({1, info.latent_channels, latent_h, latent_w});
    const TensorType image = f32({1, 3, size.height, size.width});
    calls.push_back({symbol("unet_cfg"), {latent, f32({1}), f32({2, info.max_tokens, hidden}), f32({1})}, {latent}});
    calls.push_back({symbol("vae_decode"), {latent}, {image}});
    calls.push_back({symbol("vae_encode"), {image}, {latent, latent}});
    calls.push_back({symbol("image_to_rgba"), {image}, {f32({size.height, size.width, 4})}});
  }
  for (const Call& call : calls) {
    const runtime::LaunchList& list = lists.at(call.symbol);
    const auto inputs = types_of(list, list.inputs), outputs = types_of(list, list.outputs);
    if (inputs != call.inputs || outputs != call.outputs) {
      verify_fail(dir, "function '" + call.symbol + "' takes " + types_text(inputs) + " -> " + types_text(outputs) +
                           ", but the " + facts + " makes generate call it with " + types_text(call.inputs) + " -> " +
                           types_text(call.outputs) + " (" + kEditedFix + ")");
    }
  }
}

// The tokenizer and scheduler generate makes from the artifact's model files (verified).
void verify_model_files(const std::string& dir, const backends::ArtifactBackend& backend) {
  const ClipTokenizer tokenizer = backend.tokenizer();
  if (tokenizer.max_length() != backend.info().max_tokens) {
    verify_fail(dir, "the tokenizer pads to " + std::to_string(tokenizer.max_length()) +
                         " tokens but the model section's max_tokens is " + std::to_string(backend.info().max_tokens) +
                         " (" + kEditedFix + ")");
  }
  const nlohmann::json scheduler = backend.scheduler_config();
  if (scheduler.is_null()) {
    verify_fail(dir,
                "holds no model/scheduler/scheduler_config.json (generate needs --scheduler NAME or "
                "--scheduler-config FILE with it)");
  }
  schedulers::create_scheduler(scheduler, "", backend.scheduler_config_origin());
}

// Everything above, in the order generate meets it. Returns what was checked, for the summary.
ordered_json verify_artifact(const artifact::Artifact& artifact, const InspectOptions& options) {
  const auto [shards, files] = verify_checksums(artifact);
  const backends::ArtifactBackend backend(artifact.dir(), options.access.access());
  std::map<std::string, runtime::LaunchList> lists;
  for (const auto& [symbol, json] : artifact.section("launch_lists")->items()) {  // present: the backend loaded
    lists.emplace(symbol, runtime::launch_list_from_json(json));
  }
  const std::unique_ptr<runtime::Device> device = targets::open_device(artifact.target());
  for (const auto& [symbol, list] : lists) verify_executor(artifact, *device, list);
  verify_signatures(artifact.dir(), lists, backend);
  verify_model_files(artifact.dir(), backend);
  return {{"shards_hashed", shards},
          {"files_hashed", files},
          {"checks",
           {"seal", "manifest", "weight shards", "files", "model section", "launch lists", "kernel library",
            "executors", "signatures", "tokenizer", "scheduler"}}};
}

// --- --source -----------------------------------------------------------------------------------

// The kernels section's entry for `name` (a WGSL module's kernels are "<module>:<entry>": the module
// alone names its first), or an error that names a few it has.
const nlohmann::json& kernel_entry(const artifact::Artifact& artifact, const std::string& name) {
  const nlohmann::json* section = artifact.section("kernels");
  std::vector<std::string> names;
  if (section != nullptr && section->is_array()) {
    for (const auto& kernel : *section) {
      if (!kernel.is_object() || !kernel.contains("name") || !kernel["name"].is_string()) continue;
      const std::string& own = kernel["name"].get_ref<const std::string&>();
      if (own == name || own.rfind(name + ":", 0) == 0) return kernel;
      names.push_back(own);
    }
  }
  std::string some;
  for (std::size_t i = 0; i < names.size() && i < 4; ++i) some += (i ? ", " : "") + names[i];
  throw Error("inspect", artifact.dir() + " has no kernel '" + name + "'" +
                             (names.empty() ? " (it has none)"
                                            : "; it has " + std::to_string(names.size()) + ", such as " + some +
                                                  " ('websd inspect " + artifact.dir() + "' lists them)"));
}

void print_kernel_source(const artifact::Artifact& artifact, const std::string& name) {
  const nlohmann::json& kernel = kernel_entry(artifact, name);
  const std::string own = kernel["name"].get<std::string>();
  if (!kernel.contains("source") || !kernel["source"].is_string()) {
    throw Error("inspect", artifact.dir() + " does not keep the source of kernel '" + own +
                               "' (it was built before websd kept its kernels' source): rebuild it to read that");
  }
  const std::string path = kernel["source"].get<std::string>();
  const std::vector<std::byte> bytes = artifact.file_bytes(path);  // its size and SHA-256 checked
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::cout << "// " << own << " (" << path << ")\n";
  if (path.ends_with(".wgsl")) {
    std::cout << text;
  } else {
    std::cout << codegen::cpu_kernel_source_of(text, own);
  }
  std::cout.flush();
}

void run_inspect(const InspectOptions& options) {
  artifact::ArtifactOpenOptions open_options;
  open_options.key_file = options.access.access().key_file;
  open_options.trust_key_files = options.access.trust_keys;
  open_options.allow_missing_key = !options.verify;
  const artifact::Artifact artifact = artifact::Artifact::open(options.artifact, open_options);
  if (!options.source.empty()) {
    print_kernel_source(artifact, options.source);
    return;
  }
  ordered_json summary = summarise(artifact);
  if (options.verify) summary["verified"] = verify_artifact(artifact, options);
  if (options.json) {
    std::cout << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    print_text(summary);
  }
}

const bool registered = register_command(
    {"inspect", "Show what an artifact holds: functions, kernels, memory plans, weights", [](CLI::App& command) {
       auto options = std::make_shared<InspectOptions>();
       command.add_option("artifact", options->artifact, "Artifact directory (written by 'websd build')")->required();
       CLI::Option* json = command.add_flag("--json", options->json, "Print the summary as JSON");
       CLI::Option* verify = command.add_flag(
           "--verify", options->verify,
           "Run every check that 'websd generate --artifact' runs when it loads the artifact and calls "
           "its functions (model section, launch lists, kernel library, executors and their weights, "
           "tokenizer, scheduler), and check the SHA-256 of every weight shard and every file, kernel "
           "library included (an encrypted artifact needs --key-file)");
       command
           .add_option("--source", options->source,
                       "Print the source the artifact keeps of kernel KERNEL (a name its kernels list; a WGSL "
                       "module's own name is enough): the WGSL module, or the fused group's generated C++")
           ->option_text("KERNEL")
           ->excludes(json, verify);
       add_artifact_access_options(command, options->access, false);
       command.callback([options] { run_inspect(*options); });
     }});

}  // namespace
}  // namespace websd::app
