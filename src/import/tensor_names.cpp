#include "import/tensor_names.h"

#include <array>
#include <utility>

namespace websd {
namespace {

constexpr std::string_view kClipTextPrefix = "text_model.";
// The submodules of transformers' CLIPTextTransformer, which sits under "text_model.".
constexpr std::array<std::string_view, 3> kClipTextSubmodules = {"embeddings.", "encoder.", "final_layer_norm."};

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// diffusers < 0.14 AttentionBlock projection names and today's.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kLegacyVaeAttention = {
    {{"query.", "to_q."}, {"key.", "to_k."}, {"value.", "to_v."}, {"proj_attn.", "to_out.0."}}};
constexpr std::string_view kVaeMidAttention = "mid_block.attentions.0.";

}  // namespace

TensorNaming tensor_naming_for_class(std::string_view class_name) {
  if (starts_with(class_name, "CLIPTextModel")) return TensorNaming::kClipTextPrefix;
  if (class_name == "AutoencoderKL") return TensorNaming::kAutoencoderKl;
  return TensorNaming::kAsStored;
}

std::string canonical_tensor_name(TensorNaming naming, std::string_view name) {
  if (naming == TensorNaming::kClipTextPrefix) {
    for (const auto submodule : kClipTextSubmodules) {
      if (starts_with(name, submodule)) return std::string(kClipTextPrefix) + std::string(name);
    }
  }
  if (naming == TensorNaming::kAutoencoderKl) {
    const std::size_t at = name.find(kVaeMidAttention);
    if (at != std::string_view::npos) {
      const std::string_view tail = name.substr(at + kVaeMidAttention.size());
      for (const auto& [legacy, current] : kLegacyVaeAttention) {
        if (starts_with(tail, legacy)) {
          return std::string(name.substr(0, at + kVaeMidAttention.size())) + std::string(current) +
                 std::string(tail.substr(legacy.size()));
        }
      }
    }
  }
  return std::string(name);
}

bool is_unused_tensor_name(TensorNaming naming, std::string_view name) {
  if (is_buffer_tensor_name(name)) return true;
  // What a CLIPTextModelWithProjection or a whole CLIPModel holds beside the text transformer:
  // transformers loads CLIPTextModel from them and leaves these out.
  return naming == TensorNaming::kClipTextPrefix &&
         (name == "text_projection.weight" || name == "logit_scale" || name == "visual_projection.weight" ||
          starts_with(name, "vision_model."));
}

bool is_buffer_tensor_name(std::string_view name) {
  constexpr std::string_view kPositionIds = "position_ids";
  return name == kPositionIds ||
         (name.size() > kPositionIds.size() && name.substr(name.size() - kPositionIds.size() - 1) == ".position_ids");
}

}  // namespace websd
