#include "targets/cpu/runtime/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "core/dtype.h"
#include "targets/cpu/runtime/parallel.h"

// Without AVX-512, AVX2 with FMA (every x86-64-v3 CPU: Intel since Haswell, AMD since Zen) runs
// the same polynomials 8 lanes at a time.
#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
#define WEBSD_VECTOR_MATH_AVX2 1
#endif

namespace websd::cpu {
namespace {

float gelu_scalar(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

#if !defined(__AVX512F__) && !defined(WEBSD_VECTOR_MATH_AVX2)
float sigmoid_scalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }
#endif

#ifdef __AVX512F__
// exp(x): x = n ln2 + r with |r| <= ln2/2, exp(r) by a degree-6 polynomial, times 2^n by scalef.
// Inputs below -87.3 give 0 and above 88.7 give +inf, as expf does.
inline __m512 exp16(__m512 x) {
  const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
  const __m512 ln2_hi = _mm512_set1_ps(0.693359375f);
  const __m512 ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
  x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.72283935546875f)), _mm512_set1_ps(-103.972084045410f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, ln2_hi, x);
  r = _mm512_fnmadd_ps(n, ln2_lo, r);
  __m512 p = _mm512_set1_ps(1.3981999507e-3f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), odd-extended.
inline __m512 erf16(__m512 x) {
  const __m512 sign = _mm512_and_ps(x, _mm512_set1_ps(-0.0f));
  const __m512 a = _mm512_abs_ps(x);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), a, one));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  p = _mm512_mul_ps(p, t);
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(a, a)));
  return _mm512_or_ps(_mm512_fnmadd_ps(p, e, one), sign);
}

inline __m512 gelu16(__m512 x) {
  const __m512 half_x = _mm512_mul_ps(x, _mm512_set1_ps(0.5f));
  return _mm512_fmadd_ps(half_x, erf16(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f))), half_x);
}

// Applies `vector_fn` to full 16-lane chunks and masked to the tail.
template <typename VectorFn>
void map16(const float* x, float* y, std::int64_t count, const VectorFn& vector_fn) {
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(y + i, vector_fn(_mm512_loadu_ps(x + i)));
  if (i < count) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (count - i)) - 1);
    _mm512_mask_storeu_ps(y + i, mask, vector_fn(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}
#endif

#ifdef WEBSD_VECTOR_MATH_AVX2
// The polynomials of the AVX-512 functions above, operation for operation as the generated
// kernels' scalar helpers write them (codegen/cpu_kernel_source.cpp), so that the two agree bit for
// bit: rounding by adding and subtracting 1.5 * 2^23, and 2^n as two normal factors (AVX2 has no
// scalef). exp(x): 0 below -103.97, +inf above 88.72.
inline __m256 exp8(__m256 x) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  x = _mm256_min_ps(x, _mm256_set1_ps(88.72283935546875f));  // NaN takes the bound, as the helper's compare
  x = _mm256_max_ps(x, _mm256_set1_ps(-103.972084045410f));
  const __m256 n = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), magic), magic);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.3981999507e-3f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i whole = _mm256_cvttps_epi32(n);
  const __m256i half = _mm256_srai_epi32(_mm256_add_epi32(whole, _mm256_srli_epi32(whole, 31)), 1);  // C's whole / 2
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 first = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  const __m256 second =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(whole, half), bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, first), second);
}

inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), odd-extended.
inline __m256 erf8(__m256 x) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 sign = _mm256_and_ps(x, sign_bit);
  const __m256 a = _mm256_andnot_ps(sign_bit, x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), a, one));
  __m256 p = _mm256_set1_ps(1.061405429f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
  p = _mm256_mul_ps(p, t);
  const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(a, a)));
  return _mm256_or_ps(_mm256_fnmadd_ps(p, e, one), sign);
}

inline __m256 gelu8(__m256 x) {
  const __m256 half_x = _mm256_mul_ps(x, _mm256_set1_ps(0.5f));
  return _mm256_fmadd_ps(half_x, erf8(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f))), half_x);
}

// Lanes below `count` of a masked load or store.
inline __m256i lanes_below(std::int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Applies `vector_fn` to full 8-lane chunks and masked to the tail.
template <typename VectorFn>
void map8(const float* x, float* y, std::int64_t count, const VectorFn& vector_fn) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(y + i, vector_fn(_mm256_loadu_ps(x + i)));
  if (i < count) {
    const __m256i mask = lanes_below(count - i);
    _mm256_maskstore_ps(y + i, mask, vector_fn(_mm256_maskload_ps(x + i, mask)));
  }
}

float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

}  // namespace

float exp_shifted_sum(const float* x, float* y, std::int64_t count, float shift) {
#ifdef __AVX512F__
  const __m512 shift16 = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), shift16));
    _mm512_storeu_ps(y + i, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (i < count) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (count - i)) - 1);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), shift16));
    _mm512_mask_storeu_ps(y + i, mask, e);
    sum = _mm512_mask_add_ps(sum, mask, sum, e);
  }
  return _mm512_reduce_add_ps(sum);
#elif defined(WEBSD_VECTOR_MATH_AVX2)
  const __m256 shift8 = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift8));
    _mm256_storeu_ps(y + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (i < count) {
    const __m256i mask = lanes_below(count - i);
    const __m256 e =
        _mm256_and_ps(exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), shift8)), _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(y + i, mask, e);
    sum = _mm256_add_ps(sum, e);
  }
  return sum8(sum);
#else
  float sum = 0.0f;
  for (std::int64_t i = 0; i < count; ++i) sum += (y[i] = std::exp(x[i] - shift));
  return sum;
#endif
}

float max_of(const float* x, std::int64_t count) {
#ifdef __AVX512F__
  __m512 best = _mm512_set1_ps(-INFINITY);
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) best = _mm512_max_ps(best, _mm512_loadu_ps(x + i));
  float result = _mm512_reduce_max_ps(best);
  for (; i < count; ++i) result = std::max(result, x[i]);
  return result;
#elif defined(WEBSD_VECTOR_MATH_AVX2)
  __m256 best = _mm256_set1_ps(-INFINITY);
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) best = _mm256_max_ps(best, _mm256_loadu_ps(x + i));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, best);
  float result = *std::max_element(lanes, lanes + 8);
  for (; i < count; ++i) result = std::max(result, x[i]);
  return result;
#else
  return *std::max_element(x, x + count);
#endif
}

void scale_in_place(float* y, std::int64_t count, float factor) {
  for (std::int64_t i = 0; i < count; ++i) y[i] *= factor;  // auto-vectorised
}

void narrow_to_bf16(const float* x, std::uint16_t* y, std::int64_t count, float factor) {
  // f32_to_bf16's arithmetic without its branch, so the loop vectorises.
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint32_t bits;
    const float value = x[i] * factor;
    std::memcpy(&bits, &value, sizeof bits);
    const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    const std::uint32_t quiet_nan = (bits >> 16) | 0x40u;
    y[i] = static_cast<std::uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

void widen_f16(const std::uint16_t* x, float* y, std::int64_t count) {
  std::int64_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= count; i += 8) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(bits));
  }
#endif
  for (; i < count; ++i) y[i] = f16_to_f32(x[i]);
}

void widen_f16_on_threads(const std::uint16_t* x, float* y, std::int64_t count) {
  parallel_for(count, 1 << 16,
               [&](std::int64_t begin, std::int64_t end) { widen_f16(x + begin, y + begin, end - begin); });
}

void narrow_to_f16(const float* x, std::uint16_t* y, std::int64_t count) {
  std::int64_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= count; i += 8) {
    const __m128i bits = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), bits);
  }
#endif
  for (; i < count; ++i) y[i] = f32_to_f16(x[i]);
}

void exp_map(const float* x, float* y, std::int64_t count) {
#ifdef __AVX512F__
  map16(x, y, count, exp16);
#elif defined(WEBSD_VECTOR_MATH_AVX2)
  map8(x, y, count, exp8);
#else
  for (std::int64_t i = 0; i < count; ++i) y[i] = std::exp(x[i]);
#endif
}

void silu_map(const float* x, float* y, std::int64_t count) {
#ifdef __AVX512F__
  map16(x, y, count, [](__m512 v) { return _mm512_mul_ps(v, sigmoid16(v)); });
#elif defined(WEBSD_VECTOR_MATH_AVX2)
  map8(x, y, count, [](__m256 v) { return _mm256_mul_ps(v, sigmoid8(v)); });
#else
  for (std::int64_t i = 0; i < count; ++i) y[i] = x[i] * sigmoid_scalar(x[i]);
#endif
}

void gelu_map(const float* x, float* y, std::int64_t count) {
#ifdef __AVX512F__
  map16(x, y, count, gelu16);
#elif defined(WEBSD_VECTOR_MATH_AVX2)
  map8(x, y, count, gelu8);
#else
  for (std::int64_t i = 0; i < count; ++i) y[i] = gelu_scalar(x[i]);
#endif
}

void quick_gelu_map(const float* x, float* y, std::int64_t count) {
#ifdef __AVX512F__
  map16(x, y, count, [](__m512 v) { return _mm512_mul_ps(v, sigmoid16(_mm512_mul_ps(v, _mm512_set1_ps(1.702f)))); });
#elif defined(WEBSD_VECTOR_MATH_AVX2)
  map8(x, y, count, [](__m256 v) { return _mm256_mul_ps(v, sigmoid8(_mm256_mul_ps(v, _mm256_set1_ps(1.702f)))); });
#else
  for (std::int64_t i = 0; i < count; ++i) y[i] = x[i] * sigmoid_scalar(1.702f * x[i]);
#endif
}

void gelu_gate_map(const float* hidden, const float* gate, float* out, std::int64_t count) {
  std::int64_t i = 0;
#ifdef __AVX512F__
  for (; i + 16 <= count; i += 16) {
    _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_loadu_ps(hidden + i), gelu16(_mm512_loadu_ps(gate + i))));
  }
#elif defined(WEBSD_VECTOR_MATH_AVX2)
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(hidden + i), gelu8(_mm256_loadu_ps(gate + i))));
  }
#endif
  for (; i < count; ++i) out[i] = hidden[i] * gelu_scalar(gate[i]);
}

bool vector_math_uses_kernel_polynomials() {
#if defined(__AVX512F__) || defined(WEBSD_VECTOR_MATH_AVX2)
  return true;
#else
  return false;
#endif
}

}  // namespace websd::cpu
