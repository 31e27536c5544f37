// Where a network's first call spends its time before any kernel runs (issue 35's cold start):
// each part measured where it happens and summed over the process's loads.
#pragma once

#include <cstdint>

namespace websd::runtime {

struct WeightLoadTimes {
  double read_s = 0;         // WeightSource::read: an artifact's shard reads and SHA-256 checks on first touch
  double import_s = 0;       // Device::import_weight: converting (widening f16) and handing bytes to the device
  std::uint64_t bytes = 0;   // the weights' bytes as stored
  std::int64_t weights = 0;  // imported (a weight another executor shares is not counted again)
  double executors_s = 0;    // making executors: kernel files read and checked, pipelines requested
};

}  // namespace websd::runtime
