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

double relative_l2(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) throw std::runtime_error("relative_l2: sizes differ");
  double difference = 0, norm = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    difference += (static_cast<double>(actual[i]) - expected[i]) * (static_cast<double>(actual[i]) - expected[i]);
    norm += static_cast<double>(expected[i]) * expected[i];
  }
  return std::sqrt(difference / norm);
}

double max_abs_difference(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) throw std::runtime_error("max_abs_difference: sizes differ");
  double worst = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(actual[i]) - expected[i]));
  }
  return worst;
}

}  // namespace websd::test
