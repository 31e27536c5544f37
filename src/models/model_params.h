// The learned parameters of the three SD networks, named and shaped exactly as diffusers/transformers
// checkpoints store them, derived from the typed configs. Each entry also says what kind of tensor it
// is (and its fan-in), which is what a weight initialiser needs. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/param_spec.h"
#include "models/clip_config.h"
#include "models/unet_config.h"
#include "models/vae_config.h"

namespace websd {

enum class ParamRole {
  kWeight,      // Linear [out,in] or Conv2d [out,in,kh,kw] weight
  kBias,        // bias of such a layer
  kNormWeight,  // LayerNorm/GroupNorm scale
  kNormBias,    // LayerNorm/GroupNorm shift
  kEmbedding,   // embedding table
};

struct ModelParam {
  ParamSpec spec;
  ParamRole role = ParamRole::kWeight;
  std::int64_t fan_in = 0;  // inputs per output of the layer (in x kh x kw) for kWeight/kBias, else 0

  bool operator==(const ModelParam&) const = default;
};

// CLIPTextModel with the "text_model." prefix that SD checkpoints use (no position_ids buffer).
std::vector<ModelParam> clip_text_params(const ClipTextConfig& config);
// UNet2DConditionModel.
std::vector<ModelParam> unet_params(const UNetConfig& config);
// AutoencoderKL: encoder, decoder, quant_conv and post_quant_conv (when enabled).
std::vector<ModelParam> vae_params(const VaeConfig& config);

// The name/shape list alone, in the same order.
std::vector<ParamSpec> param_specs(const std::vector<ModelParam>& params);
// Total number of scalars.
std::int64_t param_count(const std::vector<ModelParam>& params);

}  // namespace websd
