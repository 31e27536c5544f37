// The complete tensor list of a single-file SD checkpoint for given network configs: every tensor of
// the three networks' parameter lists (models/model_params.h) under its LDM name (ldm_names.h),
// with OpenCLIP's q/k/v projections fused into one tensor. The importer checks a file against it and
// cuts each tensor into diffusers tensors; the writer assembles a file from it. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/param_spec.h"
#include "import/ldm_names.h"
#include "models/clip_config.h"

namespace websd {

struct LdmTensor {
  std::string name;              // in the single file
  std::string component;         // "text_encoder", "unet" or "vae"
  Shape shape;                   // as the single file stores it
  std::vector<ParamSpec> parts;  // the diffusers tensors it holds, stacked along dimension 0 in order
                                 // (three for a fused in_proj, else one, reshaped for a 1x1 conv)
};

// In the order text encoder, UNet, VAE, each in its parameter list's order.
std::vector<LdmTensor> ldm_layout(const ClipTextConfig& clip, TextEncoderLayout text_layout, const UNetConfig& unet,
                                  const VaeConfig& vae);

}  // namespace websd
