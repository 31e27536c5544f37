// SHA-256 blocks with the x86 SHA extensions (SHA-NI). Each sha256rnds2 runs two rounds on the
// working variables held as {A,B,E,F} and {C,D,G,H}; sha256msg1/msg2 extend the message schedule
// four words at a time. Built only for x86-64 (src/artifact/CMakeLists.txt), with these instructions
// enabled for this file alone; fastest() calls it only on a CPU that has them.
#include <cpuid.h>
#include <immintrin.h>

#include "artifact/sha256_blocks.h"

namespace websd::artifact::sha256_blocks {

bool x86_sha_supported() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_SSE4_1) == 0) return false;
  return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ebx & bit_SHA) != 0;
}

__attribute__((target("sha,sse4.1"))) void compress_x86_sha(State& state, const std::uint8_t* blocks,
                                                            std::size_t count) {
  // abef and cdgh are named as sha256rnds2 names them, highest lane first: lane 0 first they hold
  // {F,E,B,A} and {H,G,D,C}. The other names list lanes from lane 0.
  const __m128i b_a_d_c = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0])), 0xB1);
  const __m128i h_g_f_e = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4])), 0x1B);
  __m128i abef = _mm_alignr_epi8(b_a_d_c, h_g_f_e, 8);
  __m128i cdgh = _mm_blend_epi16(h_g_f_e, b_a_d_c, 0xF0);
  // Message words are big-endian.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);

  for (; count > 0; --count, blocks += 64) {
    const __m128i abef_before = abef;
    const __m128i cdgh_before = cdgh;
    __m128i words[4];  // W[4g..4g+3] of the last four groups g, in a ring
    for (int g = 0; g < 16; ++g) {
      __m128i& current = words[g & 3];
      if (g < 4) {
        current = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks + 16 * g)), byte_swap);
      } else {
        // W[t] = sigma1(W[t-2]) + W[t-7] + sigma0(W[t-15]) + W[t-16], four t at once.
        const __m128i& previous = words[(g + 3) & 3];
        const __m128i with_sigma0 = _mm_sha256msg1_epu32(current, words[(g + 1) & 3]);
        const __m128i minus7 = _mm_alignr_epi8(previous, words[(g + 2) & 3], 4);
        current = _mm_sha256msg2_epu32(_mm_add_epi32(with_sigma0, minus7), previous);
      }
      const __m128i constants = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRoundConstants[4 * g]));
      const __m128i schedule = _mm_add_epi32(current, constants);
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, schedule);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(schedule, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }

  const __m128i a_b_e_f = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i g_h_c_d = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), _mm_blend_epi16(a_b_e_f, g_h_c_d, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), _mm_alignr_epi8(g_h_c_d, a_b_e_f, 8));
}

}  // namespace websd::artifact::sha256_blocks
