// The CPU kernels' vector math (vector_math.h) on one SD 1.5 activation (batch 2 at the 64x64
// latents' 320 channels: 2.6 M floats), beside the <cmath> loops that builds without AVX2 or
// AVX-512 run instead, in the same process: SiLU (GroupNorm's activation), GELU (GEGLU's gate) and
// softmax's exp with its sum. Reports elements per second.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "targets/cpu/runtime/vector_math.h"

namespace {

constexpr std::int64_t kCount = 2 * 64 * 64 * 320;

std::vector<float> inputs() {
  std::vector<float> x(kCount);
  for (std::int64_t i = 0; i < kCount; ++i)
    x[static_cast<std::size_t>(i)] = static_cast<float>((i * 7919) % 2000) * 4e-3f - 4.0f;
  return x;
}

template <typename Fn>
void run(benchmark::State& state, const Fn& fn) {
  const std::vector<float> x = inputs();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    fn(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kCount);
}

void silu_polynomial(benchmark::State& state) {
  run(state, [](const float* x, float* y) { websd::cpu::silu_map(x, y, kCount); });
}
void silu_cmath(benchmark::State& state) {
  run(state, [](const float* x, float* y) {
    for (std::int64_t i = 0; i < kCount; ++i) y[i] = x[i] * (1.0f / (1.0f + std::exp(-x[i])));
  });
}
void gelu_polynomial(benchmark::State& state) {
  run(state, [](const float* x, float* y) { websd::cpu::gelu_map(x, y, kCount); });
}
void gelu_cmath(benchmark::State& state) {
  run(state, [](const float* x, float* y) {
    for (std::int64_t i = 0; i < kCount; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
  });
}
void softmax_exp_polynomial(benchmark::State& state) {
  run(state,
      [](const float* x, float* y) { benchmark::DoNotOptimize(websd::cpu::exp_shifted_sum(x, y, kCount, 4.0f)); });
}
void softmax_exp_cmath(benchmark::State& state) {
  run(state, [](const float* x, float* y) {
    float sum = 0.0f;
    for (std::int64_t i = 0; i < kCount; ++i) sum += (y[i] = std::exp(x[i] - 4.0f));
    benchmark::DoNotOptimize(sum);
  });
}

BENCHMARK(silu_polynomial)->Unit(benchmark::kMillisecond);
BENCHMARK(silu_cmath)->Unit(benchmark::kMillisecond);
BENCHMARK(gelu_polynomial)->Unit(benchmark::kMillisecond);
BENCHMARK(gelu_cmath)->Unit(benchmark::kMillisecond);
BENCHMARK(softmax_exp_polynomial)->Unit(benchmark::kMillisecond);
BENCHMARK(softmax_exp_cmath)->Unit(benchmark::kMillisecond);

}  // namespace
