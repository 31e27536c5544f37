// What a checkpoint's three networks are, checked together: their configs (each parsed and
// bounded), that they fit each other (channels, cross-attention width; inpainting UNets refused),
// and the model facts the pipeline needs. Shared by the CPU backend and the compiler, which both
// read a checkpoint's weights through ComponentWeights afterwards (those check every tensor).
#pragma once

#include "import/diffusers_checkpoint.h"
#include "models/clip_config.h"
#include "models/unet_config.h"
#include "models/vae_config.h"
#include "pipeline/diffusion_backend.h"

namespace websd::compiler {

struct CheckpointModel {
  ClipTextConfig clip;
  UNetConfig unet;
  VaeConfig vae;
  ModelInfo info;
};

// Throws websd::Error naming the config file and key, or the two components that disagree.
CheckpointModel read_checkpoint_model(const DiffusersCheckpoint& checkpoint);

}  // namespace websd::compiler
