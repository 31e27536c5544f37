// Box-Muller for 16 uniform floats, computed exactly as PyTorch's x86-64 CPU kernel computes it
// (normal_fill_16_AVX2 with the cephes-based log256_ps / sincos256_ps of avx_mathfun.h). The released
// torch binaries are compiled with FMA contraction, which fuses most multiply-adds of those polynomials;
// the functions below spell out the same fused and unfused steps so that any compiler, any CPU and
// WebAssembly produce the same bits. They are pure functions: thread-safe.
#pragma once

#include <span>

namespace websd {

struct SinCos {
  float sin;
  float cos;
};

// Natural logarithm of a positive normal float, bit-identical to torch's log256_ps lane.
float torch_avx2_log(float x);
// Sine and cosine of a float in [0, 8192), bit-identical to torch's sincos256_ps lane.
SinCos torch_avx2_sincos(float x);

// Turns 16 uniforms in [0, 1) into 16 standard normals in place: for j < 8, u1 = 1 - values[j] and
// u2 = values[j + 8] give radius * cos to values[j] and radius * sin to values[j + 8].
void torch_box_muller_16(std::span<float, 16> values);

}  // namespace websd
