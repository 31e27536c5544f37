// `websd inspect ART [--json] [--verify] [--key-file K]`: what an artifact holds: target and
// versions, functions with their signatures, kernels, memory plans and weights (count, bytes per
// dtype, shards, encryption). Opening checks the manifest, index and shard sizes; --verify also
// reads every shard and checks its SHA-256 (and, with the key, decrypts it).

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "app/command_registry.h"
#include "artifact/artifact.h"
#include "artifact/function_signatures.h"

namespace websd::app {
namespace {

using nlohmann::ordered_json;

struct InspectOptions {
  std::string artifact;
  std::string key_file;
  bool json = false;
  bool verify = false;
};

std::string human_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

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

ordered_json summarise(const artifact::Artifact& artifact) {
  const auto& manifest = artifact.manifest();
  ordered_json summary;
  summary["artifact"] = artifact.dir();
  summary["target"] = manifest.target;
  summary["format_version"] = manifest.format_version;
  summary["websd_version"] = manifest.websd_version;
  summary["created"] = manifest.created;
  summary["sections"] = artifact.section_names();
  const nlohmann::json* functions = artifact.section(artifact::kFunctionsSection);
  summary["functions"] = functions == nullptr
                             ? nlohmann::json::array()
                             : artifact::functions_section_to_json(artifact::parse_functions_section(
                                   *functions, artifact.dir() + "/" + std::string(artifact::kManifestFileName)));
  summary["kernels"] = summarise_kernels(artifact.section("kernels"));
  summary["memory_plans"] = summarise_memory_plans(artifact.section("memory_plans"));
  summary["weights"] = summarise_weights(artifact);
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

  const auto& functions = summary["functions"];
  print_row("functions", std::to_string(functions.size()));
  for (const auto& function : functions) {
    std::printf("  %-14s %s -> %s\n  %-14s launches %llu, arena %s\n", function["symbol"].get<std::string>().c_str(),
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
  if (summary.contains("verified")) print_row("verified", "every shard's SHA-256 matches its index entry");
}

void run_inspect(const InspectOptions& options) {
  artifact::ArtifactOpenOptions open_options;
  if (!options.key_file.empty()) open_options.key_file = options.key_file;
  open_options.allow_missing_key = !options.verify;
  const artifact::Artifact artifact = artifact::Artifact::open(options.artifact, open_options);
  ordered_json summary = summarise(artifact);
  if (options.verify) {
    // Reading one tensor of each shard loads and checks the whole shard.
    std::vector<bool> checked(artifact.shards().size(), false);
    for (const auto& entry : artifact.weights()) {
      if (!checked[entry.shard]) artifact.weight(entry.name);
      checked[entry.shard] = true;
    }
    summary["verified"] = true;
  }
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
       command.add_flag("--json", options->json, "Print the summary as JSON");
       command.add_flag("--verify", options->verify,
                        "Also read every weight shard and check its SHA-256 (an encrypted artifact needs --key-file)");
       command.add_option("--key-file", options->key_file,
                          "Key of an encrypted artifact: 32 raw bytes or 64 hex digits; checked against the manifest");
       command.callback([options] { run_inspect(*options); });
     }});

}  // namespace
}  // namespace websd::app
