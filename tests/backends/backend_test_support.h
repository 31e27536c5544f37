// Shared pieces of the engine tests: the fixture model's CPU backend (opened once per process, so
// graphs and weights are built once), the same model compiled into artifacts (built once per
// process and storage dtype into a temporary folder) and the shared float comparisons.
#pragma once

#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "core/dtype.h"
#include "backends/artifact_backend.h"
#include "backends/checkpoint_backend.h"
#include "support/tensor_compare.h"

namespace websd::test {

std::string tiny_model_dir();
backends::CheckpointBackend& tiny_backend();
// The fixture model built with `websd build --target cpu` (at its default size) into a folder
// that lives for the process; one per storage dtype.
const std::string& tiny_artifact_dir(DType storage = DType::kF32);
backends::ArtifactBackend& tiny_artifact_backend(DType storage = DType::kF32);
// tiny-sd15/reference/<name>.safetensors tensor `key`, as float32.
HostTensor reference_tensor(const std::string& file, const std::string& key);

}  // namespace websd::test
