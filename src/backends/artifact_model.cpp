#include "backends/artifact_model.h"

#include "core/error.h"

namespace websd::backends {
namespace {

std::int64_t model_int(const nlohmann::json& model, const std::string& dir, const char* key) {
  const auto it = model.find(key);
  if (it == model.end() || !it->is_number_integer()) {
    throw Error("artifact", dir + ": the model section lacks integer '" + key + "' (rebuild the artifact)");
  }
  return it->get<std::int64_t>();
}

}  // namespace

ArtifactModel read_artifact_model(const nlohmann::json* section, const std::string& dir) {
  if (section == nullptr || !section->is_object())
    throw Error("artifact", dir + ": no model section (rebuild the artifact)");
  const nlohmann::json& model = *section;
  ArtifactModel read;
  ModelInfo& info = read.info;
  info.latent_channels = model_int(model, dir, "latent_channels");
  info.vae_scale_factor = model_int(model, dir, "vae_scale_factor");
  const auto scaling = model.find("vae_scaling_factor");
  if (scaling == model.end() || !scaling->is_number()) {
    throw Error("artifact", dir + ": the model section lacks vae_scaling_factor (rebuild the artifact)");
  }
  info.vae_scaling_factor = scaling->get<double>();
  info.max_tokens = model_int(model, dir, "max_tokens");
  info.sample_height = model_int(model, dir, "sample_height");
  info.sample_width = model_int(model, dir, "sample_width");
  info.latent_size_multiple = model_int(model, dir, "latent_size_multiple");
  const auto name = model.find("name");
  info.name = name != model.end() && name->is_string() ? name->get<std::string>() : "artifact";
  read.width = model_int(model, dir, "width");
  read.height = model_int(model, dir, "height");
  return read;
}

}  // namespace websd::backends
