// Throughput of TorchGenerator::randn at SD latent sizes (512x512 and 1024x1024 images).
#include <benchmark/benchmark.h>

#include "pipeline/random/torch_generator.h"

namespace {

void BM_Randn(benchmark::State& state) {
  const websd::Shape shape = {1, 4, state.range(0), state.range(0)};
  websd::TorchGenerator generator(42);
  for (auto _ : state) {
    websd::HostTensor noise = generator.randn(shape);
    benchmark::DoNotOptimize(noise.data.data());
  }
  state.SetItemsProcessed(state.iterations() * websd::shape_numel(shape));
  state.SetBytesProcessed(state.iterations() * websd::shape_numel(shape) * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK(BM_Randn)->Arg(64)->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace
