// The model facts an artifact's `model` section records (what `websd build` wrote): the ModelInfo
// the pipeline needs and the image size the artifact was built for. ArtifactBackend reads them,
// and so does the CLI before it hands a webgpu artifact to the Node runner. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/diffusion_backend.h"

namespace websd::backends {

struct ArtifactModel {
  ModelInfo info;
  std::int64_t width = 0;
  std::int64_t height = 0;
};

// Throws websd::Error("artifact") naming `dir` and the missing or mistyped field ("rebuild the artifact").
ArtifactModel read_artifact_model(const nlohmann::json* section, const std::string& dir);

}  // namespace websd::backends
