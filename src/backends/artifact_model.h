// The model facts an artifact's `model` section records (what `websd build` wrote): the ModelInfo
// the pipeline needs and the image sizes the artifact was built for. ArtifactBackend reads them,
// and so does the CLI before it hands a webgpu artifact to the Node runner. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "artifact/image_sizes.h"
#include "pipeline/diffusion_backend.h"

namespace websd::backends {

struct ArtifactModel {
  ModelInfo info;
  std::int64_t width = 0;  // the default size: the first of `sizes`
  std::int64_t height = 0;
  std::vector<artifact::ImageSize> sizes;  // every size the artifact holds (artifact/image_sizes.h)
};

// Throws websd::Error("artifact") naming `dir` and the missing or mistyped field ("rebuild the artifact").
ArtifactModel read_artifact_model(const nlohmann::json* section, const std::string& dir);

// The image size a request runs on an artifact holding `sizes` (the default first), filled in
// where the request leaves it 0: none given and no init image or latents (whose size decides
// then) is the default size; only a width or only a height is the first size with it. A size the
// artifact does not hold is websd::Error(component) naming the sizes it holds and how to rebuild.
void choose_artifact_size(const std::vector<artifact::ImageSize>& sizes, const std::string& dir, bool from_init,
                          std::int64_t& width, std::int64_t& height, const std::string& component);

}  // namespace websd::backends
