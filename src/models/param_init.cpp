#include "models/param_init.h"

#include <cmath>
#include <random>

#include "core/dtype.h"
#include "core/error.h"

namespace websd {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

// Uniform in [0, 1) from the top 53 bits: spelled out because std::uniform_real_distribution's output
// is implementation-defined, and the files must not depend on the standard library.
double unit_uniform(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

void store_f16(std::span<std::byte> out, std::size_t index, float value) {
  const std::uint16_t bits = f32_to_f16(value);
  out[2 * index] = static_cast<std::byte>(bits & 0xff);
  out[2 * index + 1] = static_cast<std::byte>(bits >> 8);
}

}  // namespace

void param_init_f16(const ModelParam& param, std::uint64_t seed, const std::string& component,
                    std::span<std::byte> out) {
  const auto count = static_cast<std::size_t>(shape_numel(param.spec.shape));
  if (out.size() != 2 * count) {
    throw Error("models", "param_init_f16: '" + param.spec.name + "' needs " + std::to_string(2 * count) +
                              " bytes, got " + std::to_string(out.size()));
  }
  std::mt19937_64 engine(splitmix64(seed ^ splitmix64(fnv1a64(component + "/" + param.spec.name))));
  switch (param.role) {
    case ParamRole::kWeight:
    case ParamRole::kBias: {
      const double bound = 1.0 / std::sqrt(static_cast<double>(param.fan_in));
      for (std::size_t i = 0; i < count; ++i) {
        store_f16(out, i, static_cast<float>(bound * (2.0 * unit_uniform(engine) - 1.0)));
      }
      break;
    }
    case ParamRole::kNormWeight:
    case ParamRole::kNormBias: {
      const float value = param.role == ParamRole::kNormWeight ? 1.0f : 0.0f;
      for (std::size_t i = 0; i < count; ++i) store_f16(out, i, value);
      break;
    }
    case ParamRole::kEmbedding: {
      // Box-Muller: each pair of uniforms gives two independent normals.
      constexpr double kStd = 0.02;
      constexpr double kTwoPi = 6.283185307179586;
      for (std::size_t i = 0; i < count; i += 2) {
        const double radius = kStd * std::sqrt(-2.0 * std::log(1.0 - unit_uniform(engine)));
        const double angle = kTwoPi * unit_uniform(engine);
        store_f16(out, i, static_cast<float>(radius * std::cos(angle)));
        if (i + 1 < count) store_f16(out, i + 1, static_cast<float>(radius * std::sin(angle)));
      }
      break;
    }
  }
}

}  // namespace websd
