#include "import/diffusers_checkpoint.h"

#include <filesystem>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_reader.h"

namespace websd {
namespace {

bool is_string_or_null(const nlohmann::json& value) { return value.is_string() || value.is_null(); }

// StableDiffusionPipeline's optional components: users often delete their folders, and diffusers
// then loads the pipeline without them, so a missing folder leaves them out instead of failing.
bool is_optional_component(std::string_view name) {
  return name == "safety_checker" || name == "feature_extractor" || name == "image_encoder";
}

}  // namespace

DiffusersCheckpoint DiffusersCheckpoint::open(const std::string& dir, const ImportOptions& options) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) {
    throw Error("import", dir + ": " + (fs::exists(dir) ? "not a folder" : "no such folder") +
                              " (expected a diffusers model folder holding model_index.json)");
  }
  DiffusersCheckpoint checkpoint;
  checkpoint.dir_ = dir;
  const std::string index_path = dir + "/model_index.json";
  if (!fs::is_regular_file(index_path)) {
    throw Error("import", index_path +
                              ": missing; websd reads diffusers folders (as save_pretrained writes them), "
                              "which name their components in model_index.json");
  }
  checkpoint.model_index_ = json_read_file(index_path);
  const auto& index = checkpoint.model_index_;
  if (!index.is_object()) throw Error("import", index_path + ": is not a JSON object");
  if (const auto it = index.find("_class_name"); it != index.end() && it->is_string()) {
    checkpoint.pipeline_class_ = it->get<std::string>();
  }
  for (const auto& [name, value] : index.items()) {
    // "_class_name", "_diffusers_version", ... describe the pipeline; plain values are options
    // such as "requires_safety_checker". Components are [library, class] pairs.
    if (name.empty() || name[0] == '_' || !value.is_array()) continue;
    const auto where = index_path + ": component " + safetensors_quote_name(name);
    if (value.size() != 2 || !is_string_or_null(value[0]) || !is_string_or_null(value[1])) {
      throw Error("import", where + " is not a [library, class] pair");
    }
    if (value[1].is_null()) continue;  // an optional component left out ([null, null])
    if (name.find('/') != std::string::npos || name == "..") throw Error("import", where + " is not a folder name");
    ComponentInfo info{name, value[0].is_string() ? value[0].get<std::string>() : "", value[1].get<std::string>(),
                       dir + "/" + name};
    if (!fs::is_directory(info.dir)) {
      if (is_optional_component(name)) continue;
      throw Error("import",
                  where + " (" + info.class_name + ") has no folder " + info.dir + " (copy the whole model folder)");
    }
    checkpoint.components_.push_back(CheckpointComponent::open(std::move(info), options.variant));
  }
  if (checkpoint.components_.empty()) throw Error("import", index_path + ": lists no components");
  return checkpoint;
}

const CheckpointComponent* DiffusersCheckpoint::find(std::string_view name) const {
  for (const auto& component : components_) {
    if (component.name() == name) return &component;
  }
  return nullptr;
}

const CheckpointComponent& DiffusersCheckpoint::component(std::string_view name) const {
  if (const auto* found = find(name)) return *found;
  std::string listed;
  for (const auto& component : components_) listed += (listed.empty() ? "" : ", ") + component.name();
  throw Error("import", dir_ + "/model_index.json: has no component " + safetensors_quote_name(name) + " (it lists " +
                            listed + ")");
}

}  // namespace websd
