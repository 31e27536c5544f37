#include "import/tensor_names.h"

#include <array>

namespace websd {
namespace {

constexpr std::string_view kClipTextPrefix = "text_model.";
// The submodules of transformers' CLIPTextTransformer, which sits under "text_model.".
constexpr std::array<std::string_view, 3> kClipTextSubmodules = {"embeddings.", "encoder.", "final_layer_norm."};

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

}  // namespace

TensorNaming tensor_naming_for_class(std::string_view class_name) {
  return starts_with(class_name, "CLIPTextModel") ? TensorNaming::kClipTextPrefix : TensorNaming::kAsStored;
}

std::string canonical_tensor_name(TensorNaming naming, std::string_view name) {
  if (naming == TensorNaming::kClipTextPrefix) {
    for (const auto submodule : kClipTextSubmodules) {
      if (starts_with(name, submodule)) return std::string(kClipTextPrefix) + std::string(name);
    }
  }
  return std::string(name);
}

bool is_buffer_tensor_name(std::string_view name) {
  constexpr std::string_view kPositionIds = "position_ids";
  return name == kPositionIds ||
         (name.size() > kPositionIds.size() && name.substr(name.size() - kPositionIds.size() - 1) == ".position_ids");
}

}  // namespace websd
