// The CLIP text encoder's configuration (transformers' CLIPTextConfig, as SD 1.x and 2.x checkpoints
// ship it in text_encoder/config.json), with that class's defaults. Value type; thread-safe to share.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace websd {

enum class ClipActivation { kQuickGelu, kGelu };

struct ClipTextConfig {
  std::int64_t vocab_size = 49408;
  std::int64_t hidden_size = 512;
  std::int64_t intermediate_size = 2048;
  std::int64_t num_hidden_layers = 12;
  std::int64_t num_attention_heads = 8;
  std::int64_t max_position_embeddings = 77;
  ClipActivation hidden_act = ClipActivation::kQuickGelu;
  double layer_norm_eps = 1e-5;
  std::int64_t projection_dim = 512;  // unused by CLIPTextModel (no projection), kept for completeness

  std::int64_t head_dim() const { return hidden_size / num_attention_heads; }
  bool operator==(const ClipTextConfig&) const = default;
};

// Parses a config object; `origin` (usually the file path) prefixes error messages. Throws websd::Error
// naming the key and value for anything websd does not support.
ClipTextConfig clip_config_from_json(const nlohmann::json& config, const std::string& origin);
// Reads and parses text_encoder/config.json.
ClipTextConfig clip_config_read(const std::string& path);

}  // namespace websd
