// A random generator that reproduces PyTorch's CPU generator bit for bit:
// TorchGenerator(S).randn(shape) equals torch.randn(shape, generator=torch.Generator("cpu").manual_seed(S)),
// and successive calls continue the same stream as successive torch calls on one generator do.
//
// What is reproduced (torch's at::CPUGeneratorImpl and its CPU normal kernel, x86-64 builds):
// - the engine is mt19937 seeded with the low 32 bits of the seed (torch drops the high bits too);
// - tensors of 16 or more elements: one float uniform per element (24-bit draws), then Box-Muller in
//   chunks of 16 pairing i with i + 8; a tail that is not a multiple of 16 is handled by drawing 16
//   fresh uniforms for the last 16 elements and transforming them again, as torch does;
// - tensors of fewer than 16 elements: double Box-Muller from 53-bit draws, whose second value is cached
//   in the generator and used by the next small draw, as torch caches next_double_normal_sample.
// Torch's vectorised AVX2 kernel (also used on AVX-512 machines) is the reference; torch on CPUs
// without AVX2 (e.g. ARM) computes different last bits for tensors of 16 or more elements.
//
// Ownership: a value type; copying a generator copies its stream position.
// Not thread-safe: one generator per pipeline run.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>

#include "core/host_tensor.h"

namespace websd {

class TorchGenerator {
 public:
  explicit TorchGenerator(std::uint64_t seed);

  // Standard-normal float32 tensor of `shape`, advancing the stream exactly as torch.randn does.
  // Throws websd::Error on a negative dimension.
  HostTensor randn(const Shape& shape);

  // The seed given at construction (torch's generator.initial_seed()).
  std::uint64_t initial_seed() const { return seed_; }

 private:
  float uniform_float();
  double uniform_double();
  double normal_double();
  void normal_fill(std::span<float> values);

  std::uint64_t seed_;
  std::mt19937 engine_;                       // torch's at::mt19937 is the standard 32-bit Mersenne Twister
  std::optional<double> next_double_normal_;  // Box-Muller's spare value, as in CPUGeneratorImpl
};

}  // namespace websd
