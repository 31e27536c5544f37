// A random generator that reproduces PyTorch's CPU generator bit for bit:
// TorchGenerator(S).randn(shape) equals torch.randn(shape, generator=torch.Generator("cpu").manual_seed(S)),
// and successive calls continue the same stream as successive torch calls on one generator do.
// Not thread-safe: one generator per pipeline run.
#pragma once

#include <cstdint>

#include "core/host_tensor.h"

namespace websd {

class TorchGenerator {
 public:
  explicit TorchGenerator(std::uint64_t seed);

  // Standard-normal float32 tensor of `shape`, advancing the stream exactly as torch.randn does.
  HostTensor randn(const Shape& shape);

 private:
  // mt19937 state and torch's cached normal; owned by the implementation.
};

}  // namespace websd
