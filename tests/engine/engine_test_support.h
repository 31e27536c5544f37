// Shared pieces of the engine tests: the fixture model's CPU backend (opened once per process, so
// graphs and weights are built once) and the shared float comparisons.
#pragma once

#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "engine/cpu_backend.h"
#include "support/tensor_compare.h"

namespace websd::test {

std::string tiny_model_dir();
engine::CpuBackend& tiny_backend();
// tiny-sd15/reference/<name>.safetensors tensor `key`, as float32.
HostTensor reference_tensor(const std::string& file, const std::string& key);

}  // namespace websd::test
