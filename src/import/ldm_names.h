// The tensor names of single-file Stable Diffusion checkpoints: the original CompVis/Stability LDM
// layout that the A1111 webui, ComfyUI and stable-diffusion.cpp read and write (one .safetensors with
// `model.diffusion_model.*` for the UNet, `first_stage_model.*` for the VAE and
// `cond_stage_model.transformer.*` (SD 1.x, Hugging Face CLIP) or `cond_stage_model.model.*`
// (SD 2.x, OpenCLIP) for the text encoder), derived from the diffusers/transformers name of each
// tensor and the network's config. Two tensors are stored differently there:
//   - OpenCLIP fuses the q/k/v projections into one `attn.in_proj_weight` [3C, C] (rows q, k, v) and
//     `attn.in_proj_bias` [3C]: each diffusers projection is a part of it;
//   - the VAE's mid-block attention projections are 1x1 convolutions [C, C, 1, 1], Linear [C, C] in
//     diffusers (the same bytes).
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "models/unet_config.h"
#include "models/vae_config.h"

namespace websd {

// How the text encoder's tensors are named and laid out in a single file.
enum class TextEncoderLayout {
  kHfClip,    // SD 1.x: cond_stage_model.transformer.text_model.* (transformers' CLIPTextModel)
  kOpenClip,  // SD 2.x: cond_stage_model.model.* (open_clip's text tower, fused in_proj)
};

inline constexpr const char* kLdmUNetPrefix = "model.diffusion_model.";
inline constexpr const char* kLdmVaePrefix = "first_stage_model.";
inline constexpr const char* kLdmHfClipPrefix = "cond_stage_model.transformer.";
inline constexpr const char* kLdmOpenClipPrefix = "cond_stage_model.model.";
// LitEma keeps an exponential moving average of the UNet as "model_ema." + the name without dots.
inline constexpr const char* kLdmEmaPrefix = "model_ema.";

struct LdmName {
  std::string name;      // the full name in the single file
  int part = -1;         // 0, 1, 2: the q, k or v rows of a fused in_proj tensor; -1: the whole tensor
  bool conv1x1 = false;  // stored as [C, C, 1, 1] where diffusers has Linear [C, C]
};

// `name` is a canonical diffusers name of that network's parameter list (models/model_params.h).
// Throws websd::Error for a name the layout has no place for (a bug in the caller).
LdmName ldm_unet_name(const UNetConfig& config, const std::string& name);
LdmName ldm_vae_name(const VaeConfig& config, const std::string& name);
LdmName ldm_text_encoder_name(TextEncoderLayout layout, const std::string& name);

// The name LitEma gives the UNet tensor `ldm_name` ("model.diffusion_model.out.2.weight" ->
// "model_ema.diffusion_modelout2weight").
std::string ldm_ema_name(const std::string& ldm_name);

}  // namespace websd
