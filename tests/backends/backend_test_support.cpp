#include "backend_test_support.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>

#include "compiler/build_artifact.h"
#include "io/safetensors_reader.h"
#include "support/fixtures.h"
#include "targets/cpu/codegen/cpu_target.h"

namespace websd::test {

std::string tiny_model_dir() { return fixture_path("tiny-sd15/model"); }

backends::CheckpointBackend& tiny_backend() {
  static const auto backend = std::make_unique<backends::CheckpointBackend>(tiny_model_dir());
  return *backend;
}

const std::string& tiny_artifact_dir(DType storage) {
  static std::map<DType, std::string> built;
  if (const auto found = built.find(storage); found != built.end()) return found->second;
  static const std::filesystem::path root = make_temp_dir("backends");
  compiler::BuildOptions options;
  options.checkpoint = std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(tiny_model_dir()));
  options.out = (root / ("tiny-" + std::string(dtype_name(storage)) + ".art")).string();
  options.storage = storage;
  compiler::build_artifact(options, compiler::cpu_target());
  return built.emplace(storage, options.out).first->second;
}

backends::ArtifactBackend& tiny_artifact_backend(DType storage) {
  static std::map<DType, std::unique_ptr<backends::ArtifactBackend>> backends;
  auto& backend = backends[storage];
  if (!backend) backend = std::make_unique<backends::ArtifactBackend>(tiny_artifact_dir(storage));
  return *backend;
}

HostTensor reference_tensor(const std::string& file, const std::string& key) {
  return SafetensorsFile(fixture_path("tiny-sd15/reference/" + file + ".safetensors")).read_f32(key);
}

}  // namespace websd::test
