// The CPU attention kernel at SD 1.5's 512x512 shapes (batch 2 with guidance, 8 heads): self-attention
// at the first two UNet levels and cross-attention over 77 text tokens. Reports GFLOP/s.
#include <benchmark/benchmark.h>

#include "targets/cpu/runtime/cpu_kernels.h"

namespace {

using websd::cpu::CpuTensor;

CpuTensor filled(const websd::Shape& shape) {
  CpuTensor tensor = CpuTensor::allocate({websd::DType::kF32, shape});
  for (std::int64_t i = 0; i < tensor.numel(); ++i)
    tensor.fdata()[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  return tensor;
}

// range(3): 1 computes the products in bf16 (as --dtype bf16; needs a CPU with native bf16);
// range(4): query rows per block of the f32 kernel (the block_rows attribute a tuning record sets), 0 for the
// kernel's own choice.
void attention(benchmark::State& state) {
  const std::int64_t q_len = state.range(0), kv_len = state.range(1), dim = state.range(2);
  const bool bf16 = state.range(3) != 0;
  const CpuTensor q = filled({2, 8, q_len, dim}), k = filled({2, 8, kv_len, dim}), v = filled({2, 8, kv_len, dim});
  CpuTensor out = CpuTensor::allocate({websd::DType::kF32, {2, 8, q_len, dim}});
  websd::Attrs attrs{{"scale", 0.15}, {"causal", std::int64_t{0}}};
  if (bf16) attrs.set("compute", std::string("bf16"));
  if (state.range(4) > 0) attrs.set("block_rows", state.range(4));
  const auto& kernel = *websd::cpu::cpu_kernel_lookup("attention");
  for (auto _ : state) kernel({&q, &k, &v}, attrs, out);
  const double flops = 2.0 * 16 * q_len * kv_len * 2 * dim;
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(attention)
    ->ArgsProduct({{4096}, {4096, 77}, {40}, {0, 1}, {0}})
    ->ArgsProduct({{1024}, {1024}, {80}, {0, 1}, {0}})
    ->ArgsProduct({{4096}, {4096}, {40}, {0}, {16, 32, 64, 128, 256}})
    ->ArgsProduct({{1024}, {1024}, {80}, {0}, {16, 32, 64, 128, 256}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
