#include "pipeline/random/torch_generator.h"

#include <cmath>

#include "pipeline/random/torch_box_muller.h"

namespace websd {
namespace {

// torch switches from the scalar Box-Muller to the chunked float kernel at this many elements.
constexpr std::size_t kChunk = 16;
// c10::pi<double>.
constexpr double kPi = 3.14159265358979323846;
// 2^-24 and 2^-53: the uniforms' steps, exact powers of two.
constexpr float kFloatStep = 1.0f / 16777216.0f;
constexpr double kDoubleStep = 1.0 / 9007199254740992.0;

}  // namespace

// at::mt19937 keeps only the low 32 bits of the seed.
TorchGenerator::TorchGenerator(std::uint64_t seed) : seed_(seed), engine_(static_cast<std::uint32_t>(seed)) {}

// at::uniform_real_distribution<float>: the low 24 bits of one 32-bit draw, times 2^-24 (exact).
float TorchGenerator::uniform_float() {
  const std::uint32_t draw = static_cast<std::uint32_t>(engine_());
  return static_cast<float>(draw & ((1u << 24) - 1)) * kFloatStep;
}

// at::uniform_real_distribution<double>: random64() puts the first 32-bit draw in the high half,
// then the low 53 bits times 2^-53 (exact).
double TorchGenerator::uniform_double() {
  const std::uint64_t high = static_cast<std::uint32_t>(engine_());
  const std::uint64_t low = static_cast<std::uint32_t>(engine_());
  const std::uint64_t draw = (high << 32) | low;
  return static_cast<double>(draw & ((std::uint64_t{1} << 53) - 1)) * kDoubleStep;
}

// at::normal_distribution<double> with mean 0 and std 1, including the cached second value.
double TorchGenerator::normal_double() {
  if (next_double_normal_) {
    const double cached = *next_double_normal_;
    next_double_normal_.reset();
    return cached * 1.0 + 0.0;  // torch's transformation::normal, which maps -0 to +0
  }
  const double u1 = uniform_double();
  const double u2 = uniform_double();
  const double radius = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * kPi * u1;
  next_double_normal_ = radius * std::sin(theta);
  return radius * std::cos(theta) * 1.0 + 0.0;
}

// normal_fill_AVX2: all uniforms first, Box-Muller per chunk of 16, then 16 fresh uniforms for an
// unaligned tail (overwriting the last 16 values, some of which were already final).
void TorchGenerator::normal_fill(std::span<float> values) {
  for (float& value : values) value = uniform_float();
  const std::size_t size = values.size();
  for (std::size_t begin = 0; begin + kChunk <= size; begin += kChunk) {
    torch_box_muller_16(values.subspan(begin).first<kChunk>());
  }
  if (size % kChunk != 0) {
    const std::span<float, kChunk> tail = values.last<kChunk>();
    for (float& value : tail) value = uniform_float();
    torch_box_muller_16(tail);
  }
}

HostTensor TorchGenerator::randn(const Shape& shape) {
  HostTensor tensor(shape);
  if (tensor.data.size() >= kChunk) {
    normal_fill(tensor.data);
  } else {
    for (float& value : tensor.data) value = static_cast<float>(normal_double());
  }
  return tensor;
}

}  // namespace websd
