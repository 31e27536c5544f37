#include "engine_test_support.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "io/safetensors_reader.h"
#include "support/fixtures.h"

namespace websd::test {

std::string tiny_model_dir() { return fixture_path("tiny-sd15/model"); }

engine::CpuBackend& tiny_backend() {
  static const auto backend = std::make_unique<engine::CpuBackend>(tiny_model_dir());
  return *backend;
}

HostTensor reference_tensor(const std::string& file, const std::string& key) {
  return SafetensorsFile(fixture_path("tiny-sd15/reference/" + file + ".safetensors")).read_f32(key);
}

}  // namespace websd::test
