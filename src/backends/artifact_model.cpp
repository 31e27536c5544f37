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
  // An artifact of one size built before `sizes` existed lists none: its one size is width x height.
  const auto sizes = model.find("sizes");
  if (sizes == model.end()) {
    read.sizes.push_back({read.width, read.height});
    return read;
  }
  if (!sizes->is_array() || sizes->empty()) {
    throw Error("artifact", dir + ": the model section's 'sizes' is not a list of sizes (rebuild the artifact)");
  }
  for (const auto& size : *sizes) {
    if (!size.is_object()) throw Error("artifact", dir + ": the model section's 'sizes' holds a non-object");
    read.sizes.push_back({model_int(size, dir, "width"), model_int(size, dir, "height")});
  }
  if (read.sizes.front() != artifact::ImageSize{read.width, read.height}) {
    throw Error("artifact", dir + ": the model section's first size is not its width x height (rebuild the artifact)");
  }
  return read;
}

void choose_artifact_size(const std::vector<artifact::ImageSize>& sizes, const std::string& dir, bool from_init,
                          std::int64_t& width, std::int64_t& height, const std::string& component) {
  if (width == 0 && height == 0) {
    if (from_init || sizes.empty()) return;
    width = sizes.front().width;
    height = sizes.front().height;
    return;
  }
  for (const artifact::ImageSize& size : sizes) {
    if ((width == 0 || width == size.width) && (height == 0 || height == size.height)) {
      width = size.width;
      height = size.height;
      return;
    }
  }
  const std::string asked = width == 0    ? "height " + std::to_string(height)
                            : height == 0 ? "width " + std::to_string(width)
                                          : artifact::image_size_text({width, height});
  throw Error(component, dir + " holds " + artifact::image_sizes_text(sizes) + " images, not " + asked +
                             " (rebuild it with websd build --size WxH, repeatable, to hold more sizes)");
}

}  // namespace websd::backends
