// Vectorised float32 loops for the transcendental parts of the CPU kernels (exp in softmax and
// attention, SiLU, GELU, QuickGELU). With AVX-512 (the build targets the host's ISA, see
// WEBSD_CPU_ARCH) they use 16-lane polynomial approximations accurate to a few ulp (GELU's erf
// to 2e-7 absolute), with AVX2 and FMA the same polynomials on 8 lanes; otherwise plain loops over
// <cmath>. Pure functions: thread-safe; `x` and `y`
// may be the same array.
#pragma once

#include <cstdint>

namespace websd::cpu {

// y[i] = exp(x[i] - shift); returns the sum of the y[i] (in float32, lane-wise then reduced).
float exp_shifted_sum(const float* x, float* y, std::int64_t count, float shift);
// Largest of x[0, count); count >= 1.
float max_of(const float* x, std::int64_t count);
// y[i] *= factor.
void scale_in_place(float* y, std::int64_t count, float factor);
// y[i] = the bf16 bits of x[i] * factor, rounded to nearest even (NaN stays a quiet NaN), as
// core/dtype.h's f32_to_bf16 gives them.
void narrow_to_bf16(const float* x, std::uint16_t* y, std::int64_t count, float factor = 1.0f);
// y[i] = the f16 value of bits x[i], exactly (F16C where the build has it, else core/dtype.h's
// f16_to_f32): for weights held in f16 and widened for each call.
void widen_f16(const std::uint16_t* x, float* y, std::int64_t count);
// widen_f16 split over the kernels' threads (a whole weight before a call).
void widen_f16_on_threads(const std::uint16_t* x, float* y, std::int64_t count);
// y[i] = the f16 bits of x[i], rounded to nearest even, as core/dtype.h's f32_to_f16 gives them.
void narrow_to_f16(const float* x, std::uint16_t* y, std::int64_t count);

void exp_map(const float* x, float* y, std::int64_t count);
void silu_map(const float* x, float* y, std::int64_t count);        // x * sigmoid(x)
void gelu_map(const float* x, float* y, std::int64_t count);        // x/2 (1 + erf(x / sqrt 2))
void quick_gelu_map(const float* x, float* y, std::int64_t count);  // x * sigmoid(1.702 x)
// out[i] = hidden[i] * gelu(gate[i]): GEGLU's second half.
void gelu_gate_map(const float* hidden, const float* gate, float* out, std::int64_t count);

// Whether the functions above compute exactly the polynomials of the generated kernels
// (codegen/cpu_kernel_source.cpp), bit for bit: in builds with AVX-512, or AVX2 and FMA. Elsewhere
// they call <cmath>, whose results differ from the polynomials' in the last bits.
bool vector_math_uses_kernel_polynomials();

}  // namespace websd::cpu
