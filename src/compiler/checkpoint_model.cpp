#include "compiler/checkpoint_model.h"

#include <filesystem>
#include <string>
#include <tuple>

#include "core/error.h"
#include "core/message_text.h"

namespace websd::compiler {
namespace {

// The name shown to users and written into PNG metadata and an artifact's manifest: the checkpoint
// folder's (or file's) name. A name may hold any byte but '/': those that are not UTF-8 (which JSON
// cannot carry) and control characters are escaped, as error messages escape them.
std::string model_name(const std::string& dir) {
  std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();  // "models/sd15/" -> "sd15"
  const std::string name = path.filename().string();
  return message_safe(name.empty() || name == "." ? std::filesystem::absolute(path).filename().string() : name);
}

void check_networks_fit(const CheckpointModel& model, const std::string& dir) {
  const auto mismatch = [&](const std::string& what, std::int64_t a, std::int64_t b) {
    if (a != b) {
      throw Error("engine", dir + ": " + what + " (" + std::to_string(a) + " vs " + std::to_string(b) +
                                "): the components come from different models");
    }
  };
  if (model.unet.in_channels == model.vae.latent_channels + 5) {
    throw Error("engine", dir + ": an inpainting UNet (in_channels " + std::to_string(model.unet.in_channels) +
                              ": latents, mask and masked image); websd runs text-to-image and image-to-image, "
                              "not inpainting");
  }
  mismatch("unet in_channels differs from vae latent_channels", model.unet.in_channels, model.vae.latent_channels);
  mismatch("unet out_channels differs from vae latent_channels", model.unet.out_channels, model.vae.latent_channels);
  mismatch("unet cross_attention_dim differs from text_encoder hidden_size", model.unet.cross_attention_dim,
           model.clip.hidden_size);
}

}  // namespace

CheckpointModel read_checkpoint_model(const DiffusersCheckpoint& checkpoint) {
  const CheckpointComponent& text_encoder = checkpoint.component("text_encoder");
  const CheckpointComponent& unet = checkpoint.component("unet");
  const CheckpointComponent& vae = checkpoint.component("vae");
  CheckpointModel model;
  model.clip = clip_config_from_json(text_encoder.config(), text_encoder.config_origin());
  model.unet = unet_config_from_json(unet.config(), unet.config_origin());
  model.vae = vae_config_from_json(vae.config(), vae.config_origin());
  check_networks_fit(model, checkpoint.dir());

  ModelInfo& info = model.info;
  info.latent_channels = model.vae.latent_channels;
  info.vae_scale_factor = std::int64_t{1} << (model.vae.block_count() - 1);
  info.vae_scaling_factor = model.vae.scaling_factor;
  info.max_tokens = model.clip.max_position_embeddings;
  if (model.unet.sample_size) std::tie(info.sample_height, info.sample_width) = *model.unet.sample_size;
  // The UNet's graph halves the latents at each level below the first.
  info.latent_size_multiple = std::int64_t{1} << (model.unet.block_count() - 1);
  info.name = model_name(checkpoint.dir());
  return model;
}

}  // namespace websd::compiler
