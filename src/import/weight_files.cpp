#include "import/weight_files.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>

#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_reader.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

// diffusers models save "diffusion_pytorch_model.*", transformers models "model.*".
constexpr std::array<std::string_view, 2> kStems = {"diffusion_pytorch_model", "model"};
constexpr std::string_view kSafetensors = ".safetensors";
constexpr std::string_view kIndexInfix = ".safetensors.index";

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string single_file_name(std::string_view stem, const std::string& variant) {
  return std::string(stem) + (variant.empty() ? "" : "." + variant) + std::string(kSafetensors);
}
std::string index_file_name(std::string_view stem, const std::string& variant) {
  return std::string(stem) + std::string(kIndexInfix) + (variant.empty() ? "" : "." + variant) + ".json";
}

std::vector<std::string> file_names_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(dir, error)) {
    // Any file but a folder: a FIFO or a device under a weights name is named as such when opened.
    if (!item.is_directory(error)) names.push_back(item.path().filename().string());
  }
  if (error) throw Error("import", dir + ": cannot list the folder: " + error.message());
  std::sort(names.begin(), names.end());
  return names;
}

// Variants that have a single file or an index here: "<stem>.<v>.safetensors" or
// "<stem>.safetensors.index.<v>.json" (variant shards "<stem>.<v>-00001-of-00002..." are not counted).
std::set<std::string> variants_present(const std::vector<std::string>& names) {
  std::set<std::string> variants;
  for (const auto& name : names) {
    for (const auto stem : kStems) {
      const std::string single_prefix = std::string(stem) + ".";
      const std::string index_prefix = std::string(stem) + std::string(kIndexInfix) + ".";
      std::string_view middle;
      if (name.size() > index_prefix.size() + 5 && starts_with(name, index_prefix) && ends_with(name, ".json")) {
        middle = std::string_view(name).substr(index_prefix.size(), name.size() - index_prefix.size() - 5);
      } else if (name.size() > single_prefix.size() + kSafetensors.size() && starts_with(name, single_prefix) &&
                 ends_with(name, kSafetensors)) {
        middle = std::string_view(name).substr(single_prefix.size(),
                                               name.size() - single_prefix.size() - kSafetensors.size());
      }
      if (!middle.empty() && middle.find('.') == std::string_view::npos &&
          middle.find("-of-") == std::string_view::npos) {
        variants.emplace(middle);
      }
    }
  }
  return variants;
}

std::string join(const std::set<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// A shard name from an index must stay inside the component folder.
bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos;
}

WeightFiles read_index(const std::string& dir, const std::string& index_path, const std::string& variant) {
  const auto bad = [&](const std::string& what) { throw Error("import", index_path + ": " + what); };
  const nlohmann::json index = json_read_file(index_path);
  const auto map_it = index.is_object() ? index.find("weight_map") : index.end();
  if (map_it == index.end() || !map_it->is_object()) {
    bad("has no \"weight_map\" object (a sharded-checkpoint index maps tensor names to shard files)");
  }
  if (map_it->empty()) bad("\"weight_map\" lists no tensors");
  WeightFiles files;
  files.index_path = index_path;
  files.variant = variant;
  std::map<std::string, std::size_t> shard_numbers;
  for (const auto& [tensor, shard] : map_it->items()) {
    if (!shard.is_string() || !is_plain_file_name(shard.get<std::string>())) {
      bad("weight_map entry for tensor " + safetensors_quote_name(tensor) +
          " is not a file name in the same folder (expected e.g. "
          "\"diffusion_pytorch_model-00001-of-00002.safetensors\")");
    }
    const auto& shard_name = shard.get_ref<const std::string&>();
    auto [it, inserted] = shard_numbers.emplace(shard_name, files.shard_paths.size());
    if (inserted) {
      const std::string shard_path = dir + "/" + shard_name;
      if (!fs::exists(shard_path)) {
        bad("weight_map puts tensor " + safetensors_quote_name(tensor) + " in shard " + shard_name +
            ", which is missing from " + dir + " (copy every shard the index lists)");
      }
      files.shard_paths.push_back(shard_path);
    }
    files.weight_map.emplace(tensor, it->second);
  }
  return files;
}

// The first weights file (single or index) of this variant that the folder holds, if any.
std::optional<std::string> first_present(const std::vector<std::string>& names, const std::string& variant) {
  for (const auto stem : kStems) {
    for (const auto& candidate : {single_file_name(stem, variant), index_file_name(stem, variant)}) {
      if (std::binary_search(names.begin(), names.end(), candidate)) return candidate;
    }
  }
  return std::nullopt;
}

WeightFiles open_weight_files(const std::string& dir, const std::string& name, const std::string& variant) {
  if (ends_with(name, kSafetensors)) return WeightFiles{"", {dir + "/" + name}, variant, {}};
  return read_index(dir, dir + "/" + name, variant);
}

std::string pickle_file_in(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    for (const auto suffix : {".bin", ".ckpt", ".pt", ".pth", ".bin.index.json"}) {
      if (ends_with(name, suffix)) return name;
    }
  }
  return "";
}

}  // namespace

WeightFiles find_weight_files(const std::string& component_dir, const std::string& variant) {
  for (const char c : variant) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      throw Error("import", "weight variant " + safetensors_quote_name(variant) +
                                " may hold only letters, digits, '_' and '-' (e.g. fp16)");
    }
  }
  const auto names = file_names_in(component_dir);
  if (const auto found = first_present(names, variant)) return open_weight_files(component_dir, *found, variant);
  const auto variants = variants_present(names);
  const std::string expected = single_file_name(kStems[0], variant) + " or " + single_file_name(kStems[1], variant) +
                               " (or a sharded " + index_file_name(kStems[0], variant) + ")";
  if (!variant.empty()) {
    const bool has_plain = first_present(names, "").has_value();
    throw Error("import", component_dir + ": no '" + variant + "' weights: expected " + expected +
                              (variants.empty() ? "" : "; variants present: " + join(variants)) +
                              (has_plain ? "; plain weights present (leave the variant out)" : ""));
  }
  if (variants.size() == 1) {
    const std::string& only = *variants.begin();
    return open_weight_files(component_dir, *first_present(names, only), only);
  }
  if (variants.size() > 1) {
    throw Error("import", component_dir + ": holds several weight variants (" + join(variants) + ") and no plain " +
                              single_file_name(kStems[0], "") + ": choose one with --variant");
  }
  if (const auto pickle = pickle_file_in(names); !pickle.empty()) {
    throw Error("import", component_dir + "/" + pickle +
                              ": PyTorch pickle weights; websd reads only safetensors, which cannot run code when "
                              "loaded (convert once in Python: DiffusionPipeline.from_pretrained(\"IN\")"
                              ".save_pretrained(\"OUT\", safe_serialization=True))");
  }
  throw Error("import", component_dir + ": no weights: expected " + expected);
}

}  // namespace websd
