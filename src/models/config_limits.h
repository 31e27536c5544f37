// Upper bounds on the counts and sizes a network config may ask for, far above every real SD
// checkpoint (SD 2.x: 23 text layers, 1280 channels; SDXL: 10 transformer layers per block) and low
// enough that building a parameter list or a graph from a hostile config (num_hidden_layers: 1e9)
// stays small: the config is refused, naming key and limit, before anything is built, and the
// weights then decide (a config that asks for more than its files hold fails at binding).
// Header-only; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/config_reader.h"

namespace websd::config_limits {

inline constexpr std::int64_t kBlocks = 8;              // UNet/VAE levels
inline constexpr std::int64_t kLayersPerBlock = 16;     // resnets per block
inline constexpr std::int64_t kTransformerLayers = 16;  // BasicTransformerBlocks per attention
inline constexpr std::int64_t kTextLayers = 128;
inline constexpr std::int64_t kChannels = 16384;  // any width: channels, hidden sizes, context
inline constexpr std::int64_t kHeads = 1024;
inline constexpr std::int64_t kVocabulary = 1 << 20;
inline constexpr std::int64_t kPositions = 4096;
inline constexpr std::int64_t kLatentSide = 512;  // UNet sample_size: 4096-pixel images at the usual 8x VAE
inline constexpr std::int64_t kImageSide = 4096;  // VAE sample_size
inline constexpr std::int64_t kKernel = 15;

inline void at_most(const ConfigReader& reader, const std::string& key, std::int64_t value, std::int64_t limit) {
  if (value > limit) throw reader.unsupported(key, "expected at most " + std::to_string(limit));
}

inline void all_at_most(const ConfigReader& reader, const std::string& key, const std::vector<std::int64_t>& values,
                        std::int64_t limit) {
  for (const std::int64_t value : values) at_most(reader, key, value, limit);
}

}  // namespace websd::config_limits
