// Convolution and linear weights held in f16 (attribute weights = "f16", what `--dtype f16` on the
// CPU compiles to): each kernel widens the held bits to f32 for the call and computes in f32, so
// its result must equal, bit for bit, the f32 kernel's over the same weights rounded to f16 (the
// same packed values reach the same primitive), but for websd's Winograd (without AVX-512), whose
// packing is the transformed weight: there within the error of rounding the weight itself. The packed layouts are
// marked as f16-held and read half the bytes; the device holds them in f16, narrowing f32 values once and adopting f16
// bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/dtype.h"
#include "cpu_test_util.h"
#include "runtime/device.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/cpu_device.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_conv.h"
#include "targets/cpu/runtime/onednn_linear.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

std::vector<float> rounded_to_f16(const std::vector<float>& values) {
  std::vector<float> rounded;
  for (const float v : values) rounded.push_back(f16_to_f32(f32_to_f16(v)));
  return rounded;
}

struct ConvCase {
  const char* name;
  Shape x;  // NHWC
  std::int64_t out_channels, kernel, stride, padding;
};

void PrintTo(const ConvCase& c, std::ostream* out) { *out << c.name; }

ConvGeometry geometry_of(const ConvCase& c, bool f16_weights) {
  const std::int64_t oh = (c.x[1] + 2 * c.padding - c.kernel) / c.stride + 1;
  const std::int64_t ow = (c.x[2] + 2 * c.padding - c.kernel) / c.stride + 1;
  ConvGeometry g{c.x,
                 {c.out_channels, c.x[3], c.kernel, c.kernel},
                 {c.x[0], oh, ow, c.out_channels},
                 c.stride,
                 c.padding,
                 true,
                 false,
                 ConvLayout::kNhwc};
  g.f16_weights = f16_weights;
  return g;
}

class F16HeldConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(F16HeldConv, EqualsF32OverTheRoundedWeightAndHoldsHalfTheBytes) {
  const ConvCase& c = GetParam();
  const ConvGeometry held = geometry_of(c, true), f32 = geometry_of(c, false);
  const std::string layout = conv_weight_layout(held);
  ASSERT_TRUE(conv_layout_holds_f16(layout)) << layout;
  EXPECT_FALSE(conv_layout_reads_bf16(layout)) << layout;
  EXPECT_FALSE(conv_layout_holds_f16(conv_weight_layout(f32))) << conv_weight_layout(f32);
  EXPECT_TRUE(weight_layout_holds_f16(layout));
  // The packing itself is the f32 kernel's (the plain OIHW one has no name there).
  const std::string f32_layout = conv_weight_layout(f32);
  if (!f32_layout.empty()) {
    EXPECT_EQ(layout.substr(layout.find(':')), f32_layout.substr(f32_layout.find(':'))) << layout;
  }
  const std::uint64_t f32_bytes = conv_packed_weight_bytes(f32);
  EXPECT_EQ(conv_packed_weight_bytes(held), f32_layout.empty() ? shape_numel(f32.w) * 2 : f32_bytes / 2);

  const std::vector<float> x = *test::random_tensor(held.x, 1).f32;
  const std::vector<float> w = *test::random_tensor(held.w, 2, 0.1f).f32;
  const std::vector<float> bias = *test::random_tensor({c.out_channels}, 3).f32;
  const std::vector<float> zeros(static_cast<std::size_t>(shape_numel(held.y)));
  const std::vector<float> got = test::conv_with_packed_weight(held, x, w, bias, zeros);
  const std::vector<float> over_rounded = test::conv_with_packed_weight(f32, x, rounded_to_f16(w), bias, zeros);
  if (layout.starts_with("onednn-winograd2x3-f16:")) {
    // websd's Winograd packs the transformed weight, so f16 rounds G g G^T rather than g: an error
    // of the same size as rounding g itself, not the same bits.
    const std::vector<float> exact = test::conv_with_packed_weight(f32, x, w, bias, zeros);
    const double rounding_g = test::relative_l2(over_rounded, exact);
    EXPECT_LT(test::relative_l2(got, exact), 3 * rounding_g) << c.name << ": rounding g itself " << rounding_g;
  } else {
    EXPECT_EQ(got, over_rounded) << c.name;
  }
  // A weight given plain (a graph input) is packed from f32 for the call, not widened.
  std::vector<float> plain(zeros.size());
  onednn_conv2d(held, x.data(), w.data(), false, bias.data(), plain.data());
  EXPECT_EQ(plain, test::conv_with_packed_weight(f32, x, w, bias, zeros)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Geometries, F16HeldConv,
                         ::testing::Values(ConvCase{"direct_3x3", {1, 12, 10, 24}, 40, 3, 1, 1},
                                           ConvCase{"strided_3x3", {2, 10, 10, 32}, 32, 3, 2, 1},
                                           ConvCase{"pointwise", {1, 8, 8, 48}, 24, 1, 1, 0},
                                           // 512 output pixels: one matmul over im2col rows.
                                           ConvCase{"as_a_matmul", {2, 16, 16, 64}, 64, 3, 1, 1},
                                           // 64x64 pixels of 64 channels: Winograd (oneDNN's on AVX-512,
                                           // websd's F(2x2, 3x3) without it).
                                           ConvCase{"winograd", {1, 64, 64, 64}, 64, 3, 1, 1},
                                           // 590 Ki weight values: widened by several threads.
                                           ConvCase{"wide_weight", {1, 8, 8, 256}, 256, 3, 1, 1}),
                         [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

TEST(F16HeldConv, Bf16ComputeKeepsItsOwnLayout) {
  ConvGeometry g = geometry_of({"bf16", {1, 8, 8, 16}, 16, 3, 1, 1}, true);
  g.bf16 = true;
  g.f16_weights = true;
  if (!onednn_bf16_available()) GTEST_SKIP() << "bf16 convolutions need native bf16 (AVX512-BF16 or AMX)";
  EXPECT_FALSE(conv_layout_holds_f16(conv_weight_layout(g))) << conv_weight_layout(g);
  EXPECT_TRUE(conv_layout_reads_bf16(conv_weight_layout(g))) << conv_weight_layout(g);
}

Attrs f16_weight_attrs() {
  Attrs attrs;
  attrs.set("weights", std::string("f16"));
  return attrs;
}

TEST(F16HeldLinear, EqualsF32OverTheRoundedWeight) {
  // The second weight is widened by several threads (more than two chunks of 64 Ki values).
  for (const auto& [rows, n, k, with_bias] : {std::tuple{37, 72, 96, true}, std::tuple{5, 320, 1280, false}}) {
    const CpuTensor x = test::random_tensor({rows, k}, 1);
    const CpuTensor w = test::random_tensor({n, k}, 2, 0.1f);
    const CpuTensor b = test::random_tensor({n}, 3);
    std::vector<std::uint16_t> bits;
    for (const float v : *w.f32) bits.push_back(f32_to_f16(v));
    CpuTensor held = CpuTensor::view(w.type, bits.data());
    held.layout = std::string(kLinearF16Layout);
    CpuTensor rounded = CpuTensor::allocate(w.type);
    *rounded.f32 = rounded_to_f16(*w.f32);
    const CpuTensor* bias = with_bias ? &b : nullptr;
    EXPECT_EQ(test::run_linear(x, held, bias, f16_weight_attrs()), test::run_linear(x, rounded, bias, Attrs{}))
        << "bias " << with_bias;
  }
}

TEST(F16HeldWeights, WidenAndNarrowAreExactAndRoundToNearestEven) {
  // Every f16 bit pattern widens as f16_to_f32 does and narrows back to itself (NaNs stay NaN).
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  std::vector<float> wide(all.size());
  widen_f16(all.data(), wide.data(), static_cast<std::int64_t>(all.size()));
  std::vector<std::uint16_t> back(all.size());
  narrow_to_f16(wide.data(), back.data(), static_cast<std::int64_t>(wide.size()));
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float expected = f16_to_f32(all[i]);
    if (expected != expected) {
      EXPECT_NE(wide[i], wide[i]) << i;
      continue;
    }
    ASSERT_EQ(std::memcmp(&wide[i], &expected, sizeof(float)), 0) << "bits " << i;
    ASSERT_EQ(back[i], all[i]) << "bits " << i;
  }
  // Halfway cases and tails (count not a multiple of 8) as f32_to_f16 rounds them.
  const std::vector<float> values = {
      1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65520.0f, -2.5e-8f, 1e-5f, 3.14159f, -0.0f};
  std::vector<std::uint16_t> narrowed(values.size());
  narrow_to_f16(values.data(), narrowed.data(), static_cast<std::int64_t>(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(narrowed[i], f32_to_f16(values[i])) << values[i];
}

TEST(F16HeldWeights, TheDeviceNarrowsF32OnceAndAdoptsF16) {
  CpuDevice device;
  const runtime::LaunchWeight weight{"w", std::string(kLinearF16Layout), {DType::kF32, {4, 5}}};
  const std::vector<float> values = *test::random_tensor({4, 5}, 7).f32;
  const runtime::WeightBytes f32{std::as_bytes(std::span<const float>(values)), DType::kF32, nullptr};
  const runtime::BufferPtr narrowed = device.import_weight(weight, f32);
  ASSERT_EQ(narrowed->bytes(), values.size() * sizeof(std::uint16_t));
  const auto* bits = reinterpret_cast<const std::uint16_t*>(CpuDevice::address({narrowed.get(), 0, narrowed->bytes()}));
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(bits[i], f32_to_f16(values[i])) << i;

  std::vector<std::uint16_t> stored(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) stored[i] = f32_to_f16(values[i]);
  const runtime::WeightBytes f16{std::as_bytes(std::span<const std::uint16_t>(stored)), DType::kF16, nullptr};
  const runtime::BufferPtr adopted = device.import_weight(weight, f16);
  EXPECT_EQ(CpuDevice::address({adopted.get(), 0, adopted->bytes()}), reinterpret_cast<const std::byte*>(stored.data()))
      << "an f16 weight is used where it lies";
}

}  // namespace
}  // namespace websd::cpu
