#include "import/checkpoint_component.h"

#include <filesystem>
#include <set>

#include "core/error.h"
#include "import/weight_files.h"
#include "io/json_file.h"

namespace websd {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string file_name_of(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

ComponentKind component_kind_for_class(std::string_view class_name) {
  if (ends_with(class_name, "Scheduler")) return ComponentKind::kScheduler;
  if (ends_with(class_name, "Tokenizer") || ends_with(class_name, "TokenizerFast")) return ComponentKind::kTokenizer;
  if (ends_with(class_name, "FeatureExtractor") || ends_with(class_name, "Processor")) {
    return ComponentKind::kProcessor;
  }
  return ComponentKind::kModel;
}

CheckpointComponent CheckpointComponent::open(ComponentInfo info, const std::string& variant) {
  CheckpointComponent component;
  component.info_ = std::move(info);
  component.kind_ = component_kind_for_class(component.info_.class_name);
  if (component.kind_ != ComponentKind::kModel) return component;

  const std::string config_path = component.info_.dir + "/config.json";
  if (!std::filesystem::exists(config_path)) {  // a FIFO or a folder is named as such by json_read_file
    throw Error("import", config_path + ": missing; the " + component.info_.class_name +
                              " component needs the config.json that was saved with its weights");
  }
  component.config_ = json_read_file(config_path);
  component.config_origin_ = config_path;
  if (!component.config_.is_object()) throw Error("import", config_path + ": is not a JSON object");
  component.naming_ = tensor_naming_for_class(component.info_.class_name);
  component.open_weights(variant);
  return component;
}

void CheckpointComponent::open_weights(const std::string& variant) {
  WeightFiles weights = find_weight_files(info_.dir, variant);
  variant_ = weights.variant;
  index_path_ = weights.index_path;
  for (const auto& path : weights.shard_paths) files_.push_back(std::make_shared<const SafetensorsFile>(path));
  if (index_path_.empty()) {
    for (const auto& entry : files_.front()->entries()) add_tensor(*files_.front(), entry);
    return;
  }
  const auto broken = [&](const std::string& what) {
    throw Error("import", index_path_ + ": " + what + " (the index and the shards come from different saves?)");
  };
  for (const auto& [name, shard] : weights.weight_map) {
    const SafetensorsEntry* entry = files_[shard]->find(name);
    if (entry == nullptr) {
      broken("weight_map puts tensor " + safetensors_quote_name(name) + " in shard " +
             file_name_of(files_[shard]->path()) + ", which does not hold it");
    }
    add_tensor(*files_[shard], *entry);
  }
  for (std::size_t shard = 0; shard < files_.size(); ++shard) {
    for (const auto& entry : files_[shard]->entries()) {
      const auto listed = weights.weight_map.find(entry.name);
      if (listed == weights.weight_map.end()) {
        broken("shard " + file_name_of(files_[shard]->path()) + " holds tensor " + safetensors_quote_name(entry.name) +
               ", which the weight_map does not list");
      } else if (listed->second != shard) {
        broken("shard " + file_name_of(files_[shard]->path()) + " also holds tensor " +
               safetensors_quote_name(entry.name) + ", which the weight_map puts in shard " +
               file_name_of(files_[listed->second]->path()));
      }
    }
  }
}

CheckpointComponent CheckpointComponent::from_views(ComponentInfo info, nlohmann::json config,
                                                    std::string config_origin,
                                                    std::shared_ptr<const SafetensorsFile> file,
                                                    std::vector<SafetensorsEntry> views, std::string origin) {
  CheckpointComponent component;
  component.info_ = std::move(info);
  component.kind_ = ComponentKind::kModel;
  component.config_ = std::move(config);
  component.config_origin_ = std::move(config_origin);
  component.naming_ = tensor_naming_for_class(component.info_.class_name);
  component.origin_ = std::move(origin);
  component.views_ = std::make_shared<const std::vector<SafetensorsEntry>>(std::move(views));
  for (const auto& entry : *component.views_) component.add_tensor(*file, entry);
  component.files_.push_back(std::move(file));
  return component;
}

void CheckpointComponent::add_tensor(const SafetensorsFile& file, const SafetensorsEntry& entry) {
  std::string canonical = canonical_tensor_name(naming_, entry.name);
  if (canonical != entry.name) names_were_normalised_ = true;
  const auto [it, inserted] = tensors_.emplace(std::move(canonical), TensorLocation{&file, &entry});
  if (!inserted) {
    throw Error("import", file.path() + ": tensors " + safetensors_quote_name(it->second.entry->name) + " and " +
                              safetensors_quote_name(entry.name) + " both stand for " +
                              safetensors_quote_name(it->first) + " (store each tensor once, with or without " +
                              "the 'text_model.' prefix)");
  }
}

const nlohmann::json& CheckpointComponent::config() const {
  if (kind_ != ComponentKind::kModel) {
    throw Error("import", info_.dir + ": the " + info_.class_name + " component has no config.json (not a model)");
  }
  return config_;
}

std::string CheckpointComponent::weights_origin() const {
  if (!origin_.empty()) return origin_;
  if (!index_path_.empty()) return index_path_;
  return files_.empty() ? info_.dir : files_.front()->path();
}

std::vector<std::string> CheckpointComponent::tensor_names() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto& [name, location] : tensors_) names.push_back(name);
  return names;
}

const TensorLocation* CheckpointComponent::find(std::string_view name) const {
  const auto it = tensors_.find(canonical_tensor_name(naming_, name));
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorLocation& CheckpointComponent::at(std::string_view name) const {
  const TensorLocation* location = find(name);
  if (location == nullptr) {
    throw Error("import",
                weights_origin() + ": " + info_.name + " has no tensor named " + safetensors_quote_name(name));
  }
  return *location;
}

HostTensor CheckpointComponent::read_f32(std::string_view name) const {
  const TensorLocation& location = at(name);
  HostTensor tensor(location.entry->shape);
  location.file->read_f32_into(*location.entry, tensor.data);
  return tensor;
}

void CheckpointComponent::read_f32_into(std::string_view name, std::span<float> out) const {
  const TensorLocation& location = at(name);
  location.file->read_f32_into(*location.entry, out);
}

ComponentStats CheckpointComponent::stats() const {
  ComponentStats stats;
  for (const auto& [name, location] : tensors_) {
    ++stats.tensors;
    ++stats.dtypes[std::string(dtype_name(location.entry->dtype))];
    if (is_buffer_tensor_name(name)) {
      ++stats.buffers;
    } else {
      stats.parameters += location.entry->numel();
    }
  }
  if (views_) {
    for (const auto& entry : *views_) stats.bytes_on_disk += entry.byte_size();
  } else {
    for (const auto& file : files_) stats.bytes_on_disk += file->file_size();
  }
  return stats;
}

ParamCheck CheckpointComponent::check(const std::vector<ParamSpec>& expected) const {
  ParamCheck result;
  result.component = info_.name;
  result.origin = weights_origin();
  std::set<std::string, std::less<>> expected_names;
  for (const auto& spec : expected) {
    std::string canonical = canonical_tensor_name(naming_, spec.name);
    const auto it = tensors_.find(canonical);
    if (it == tensors_.end()) {
      result.problems.push_back({ParamProblem::Kind::kMissing, canonical, weights_origin(), spec.shape, {}, ""});
    } else if (it->second.entry->shape != spec.shape) {
      result.problems.push_back({ParamProblem::Kind::kWrongShape, canonical, it->second.file->path(), spec.shape,
                                 it->second.entry->shape, ""});
    } else if (!dtype_is_float(it->second.entry->dtype)) {
      result.problems.push_back({ParamProblem::Kind::kNotFloat, canonical, it->second.file->path(), spec.shape,
                                 it->second.entry->shape, std::string(dtype_name(it->second.entry->dtype))});
    }
    if (!expected_names.insert(std::move(canonical)).second) {
      throw Error("import", info_.name + ": the expected parameter list names " + safetensors_quote_name(spec.name) +
                                " twice (a bug in the network definition)");
    }
  }
  for (const auto& [name, location] : tensors_) {
    if (!expected_names.contains(name) && !is_unused_tensor_name(naming_, name)) {
      result.problems.push_back(
          {ParamProblem::Kind::kUnexpected, name, location.file->path(), {}, location.entry->shape, ""});
    }
  }
  return result;
}

std::vector<BoundParam> CheckpointComponent::bind(const std::vector<ParamSpec>& expected) const {
  const ParamCheck result = check(expected);
  if (!result.ok()) throw Error("import", result.summary());
  std::vector<BoundParam> bound;
  bound.reserve(expected.size());
  for (const auto& spec : expected) bound.push_back({spec, *find(spec.name)});
  return bound;
}

}  // namespace websd
