// 3x3 convolutions at SD 1.5's 512x512 UNet shapes (batch 2 with guidance, NHWC), in bf16, in f32,
// and in f32 over weights held in f16 (`--dtype f16`: widened for each call),
// direct and as websd runs them (Winograd where onednn_conv.cpp takes it; the label names the
// weight layout). Reports the direct convolution's GFLOP/s (2 x pixels x 9 x C x O per call), so
// Winograd's can exceed the chip's peak. On an AVX-512 machine, ONEDNN_MAX_CPU_ISA=AVX2 stands in
// for a CPU without it (no oneDNN Winograd: f32 takes websd's F(2x2, 3x3) then).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/dtype.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/onednn_conv.h"

namespace {

using websd::cpu::ConvGeometry;

enum class Weights { kF32, kF16, kBf16 };

// range: pixels per side, input channels, output channels, 1 to allow Winograd.
template <Weights kWeights>
void conv3x3(benchmark::State& state) {
  constexpr bool kBf16 = kWeights == Weights::kBf16;
  if (kBf16 && !websd::cpu::onednn_bf16_available()) {
    state.SkipWithError("needs a CPU with native bf16 (AVX512-BF16 or AMX)");
    return;
  }
  const std::int64_t side = state.range(0), channels = state.range(1), out = state.range(2);
  ConvGeometry g{{2, side, side, channels},
                 {out, channels, 3, 3},
                 {2, side, side, out},
                 1,
                 1,
                 true,
                 false,
                 websd::cpu::ConvLayout::kNhwc,
                 kBf16,
                 state.range(3) != 0};
  g.f16_weights = kWeights == Weights::kF16;
  std::vector<float> x(static_cast<std::size_t>(2 * side * side * channels));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  std::vector<float> w(static_cast<std::size_t>(out * channels * 9));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 104729) % 1000) * 1e-4f - 0.05f;
  const std::vector<float> bias(static_cast<std::size_t>(out), 0.1f);
  const std::vector<float> layout_values = websd::cpu::conv_pack_weight(g, w.data());
  std::vector<std::uint16_t> narrowed(kWeights != Weights::kF32 ? layout_values.size() : 0);
  for (std::size_t i = 0; i < narrowed.size(); ++i) {
    narrowed[i] = kBf16 ? websd::f32_to_bf16(layout_values[i]) : websd::f32_to_f16(layout_values[i]);
  }
  const float* packed = narrowed.empty() ? layout_values.data() : reinterpret_cast<const float*>(narrowed.data());
  std::vector<float> y(static_cast<std::size_t>(2 * side * side * out));
  for (auto _ : state) websd::cpu::onednn_conv2d(g, x.data(), packed, true, bias.data(), y.data());
  const double flops = 2.0 * 2 * side * side * 9 * channels * out;
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  const std::string layout = websd::cpu::conv_weight_layout(g);
  state.SetLabel(layout.substr(0, layout.find(':')));
}
void conv3x3_bf16(benchmark::State& state) { conv3x3<Weights::kBf16>(state); }
void conv3x3_f32(benchmark::State& state) { conv3x3<Weights::kF32>(state); }
void conv3x3_f16_weights(benchmark::State& state) { conv3x3<Weights::kF16>(state); }

void unet_shapes(benchmark::internal::Benchmark* b) {
  b->ArgsProduct({{64}, {320}, {320}, {0, 1}})
      ->ArgsProduct({{64}, {960}, {320}, {0, 1}})
      ->ArgsProduct({{64}, {640}, {640}, {0, 1}})
      ->ArgsProduct({{32}, {640}, {640}, {0, 1}})
      ->ArgsProduct({{32}, {1920}, {640}, {0, 1}})
      ->ArgsProduct({{32}, {1280}, {1280}, {0, 1}})
      ->ArgsProduct({{16}, {1280}, {1280}, {0, 1}})
    ->ArgsProduct({{8}, {1280}, {1280}, {0, 1}})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}
BENCHMARK(conv3x3_bf16)->Apply(unet_shapes);
BENCHMARK(conv3x3_f32)->Apply(unet_shapes);
BENCHMARK(conv3x3_f16_weights)->Apply(unet_shapes);

}  // namespace
