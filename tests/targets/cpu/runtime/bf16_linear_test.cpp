// bf16 linear layers (attribute compute = "bf16", what `--dtype bf16` compiles to) against f32 ones
// on bf16-rounded operands: the same products, summed in f32, so they agree to summation order;
// with the weight held as bf16 (kLinearBf16Layout) or given as f32 and narrowed per call, with and
// without bias, over many rows and over one. On a CPU without native bf16 they are refused with one
// sentence. On every CPU: a bf16-held weight is never read as f32.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "cpu_test_util.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_linear.h"

namespace websd::cpu {
namespace {

struct Case {
  const char* name;
  std::int64_t m, n, k;
  bool bias;
};

Attrs compute_attrs(const char* compute) {
  Attrs attrs;
  attrs.set("compute", std::string(compute));
  return attrs;
}

CpuTensor rounded_to_bf16(const CpuTensor& tensor) {
  CpuTensor out = CpuTensor::allocate(tensor.type);
  for (std::size_t i = 0; i < out.f32->size(); ++i) (*out.f32)[i] = bf16_to_f32(f32_to_bf16((*tensor.f32)[i]));
  return out;
}

// The weight as the device holds it for a bf16 linear layer: its bf16 bits, in a view.
struct HeldBf16 {
  std::vector<std::uint16_t> bits;
  CpuTensor tensor;
};

HeldBf16 held_as_bf16(const CpuTensor& weight) {
  HeldBf16 held;
  for (const float v : *weight.f32) held.bits.push_back(f32_to_bf16(v));
  held.tensor = CpuTensor::view(weight.type, held.bits.data());
  held.tensor.layout = std::string(kLinearBf16Layout);
  return held;
}

class Bf16Linear : public ::testing::TestWithParam<Case> {};

TEST_P(Bf16Linear, MatchesF32OnRoundedOperandsOrIsRefused) {
  const Case& c = GetParam();
  const CpuTensor x = test::random_tensor({c.m, c.k}, 1);
  const CpuTensor w = test::random_tensor({c.n, c.k}, 2, 0.1f);
  const CpuTensor b = test::random_tensor({c.n}, 3);
  const CpuTensor* bias = c.bias ? &b : nullptr;
  const HeldBf16 held = held_as_bf16(w);
  if (!onednn_bf16_available()) {
    try {
      test::run_linear(x, held.tensor, bias, compute_attrs("bf16"));
      FAIL() << "a bf16 linear layer ran on a CPU without native bf16";
    } catch (const Error& error) {
      EXPECT_NE(error.message().find("no native bf16 (AVX512-BF16 or AMX)"), std::string::npos) << error.message();
    }
    return;
  }
  const std::vector<float> got = test::run_linear(x, held.tensor, bias, compute_attrs("bf16"));
  const std::vector<float> narrowed_per_call = test::run_linear(x, w, bias, compute_attrs("bf16"));
  const std::vector<float> same_products =
      test::run_linear(rounded_to_bf16(x), rounded_to_bf16(w), bias, compute_attrs("f32"));
  const std::vector<float> exact = test::run_linear(x, w, bias, compute_attrs("f32"));
  EXPECT_LT(test::relative_l2(got, same_products), 1e-5) << c.name;
  EXPECT_EQ(got, narrowed_per_call) << c.name;
  // bf16's rounding itself: 8 bits of mantissa, about 2^-9 relative per operand.
  EXPECT_LT(test::relative_l2(got, exact), 1e-2) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16Linear,
                         ::testing::Values(Case{"tokens", 154, 96, 64, true}, Case{"no_bias", 33, 48, 80, false},
                                           Case{"one_row", 1, 128, 320, true}, Case{"wide", 64, 640, 320, true}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(Bf16Linear, AWeightHeldAsBf16IsNeverReadAsF32) {
  const CpuTensor x = test::random_tensor({4, 8}, 1);
  const HeldBf16 held = held_as_bf16(test::random_tensor({6, 8}, 2));
  for (const char* compute : {"f32", ""}) {
    const Attrs attrs = *compute == '\0' ? Attrs() : compute_attrs(compute);
    try {
      test::run_linear(x, held.tensor, nullptr, attrs);
      FAIL() << "an f32 linear layer read a bf16-held weight";
    } catch (const Error& error) {
      EXPECT_NE(error.message().find("a bf16 weight read by an f32 linear layer"), std::string::npos)
          << error.message();
    }
  }
}

}  // namespace
}  // namespace websd::cpu
