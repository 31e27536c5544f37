// Shared pieces of the engine tests: the fixture model's CPU backend (opened once per process, so
// graphs and weights are built once) and float comparisons.
#pragma once

#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "engine/cpu_backend.h"

namespace websd::test {

std::string tiny_model_dir();
engine::CpuBackend& tiny_backend();
// tiny-sd15/reference/<name>.safetensors tensor `key`, as float32.
HostTensor reference_tensor(const std::string& file, const std::string& key);

double relative_l2(const std::vector<float>& actual, const std::vector<float>& expected);
double max_abs_difference(const std::vector<float>& actual, const std::vector<float>& expected);

}  // namespace websd::test
