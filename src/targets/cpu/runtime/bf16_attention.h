// Attention softmax(q k^T * scale) v whose two products take bf16 operands and accumulate in f32
// (attention nodes with compute = "bf16"), fused in one pass over the keys (the online softmax of
// FlashAttention) with AVX512-BF16's dot products: no score matrix leaves the core's L1 cache.
//
// Once per call K and V are narrowed to bf16 and packed as the products read them. A task takes 24
// query rows of one head (scaled by scale * log2(e) and narrowed) and walks the keys 64 at a time:
// scores into registers (6 rows x 64 keys per tile), then per row a shift (an integer above every
// score so far: raised only when a score exceeds it), the exponentials 2^(s - shift) in f32 narrowed
// for the second product, and the output rows (f32, in L1) rescaled when the shift grows. Shifts
// are integers so that rescaling multiplies by powers of two: each bf16 probability is exactly the
// one a single pass with the final shift would have rounded. The row sums stay f32 (unrounded
// exponentials); each output row is divided by its sum at the end.
#pragma once

#include <cstdint>

namespace websd::cpu {

struct AttentionSizes {
  std::int64_t heads = 0;   // batch * heads
  std::int64_t q_len = 0;   // query rows per head
  std::int64_t kv_len = 0;  // key (and value) rows per head
  std::int64_t dim = 0;     // query and key width
  std::int64_t v_dim = 0;   // value width
};

// Whether this CPU has AVX512-BF16's instructions, which the kernel is written in (every CPU
// whose oneDNN bf16 kernels run natively has them: AMX CPUs too).
bool bf16_attention_available();

// Whether the kernel is faster here than f32 attention: whether this CPU issues VDPBF16PS (two
// products a lane) at least 3/4 as often as VFMADD (one), timed once per process. AMD's Zen 4 issues
// both once a cycle (the kernel: 1.9x f32 attention); Intel's AMX Xeons VDPBF16PS once every two
// cycles against two FMAs a cycle (the kernel: 0.5-0.7x f32 attention on an Emerald Rapids).
// Attention nodes that compute in bf16 run f32 attention where this is false: more precise, and
// faster there.
bool bf16_attention_pays();

// q [heads, q_len, dim], k [heads, kv_len, dim], v [heads, kv_len, v_dim] and out [heads, q_len, v_dim],
// all f32 and dense. With `causal`, query i sees keys up to i (queries aligned with the end of the
// keys); a row that sees no key is zero. Throws websd::Error on a CPU without AVX512-BF16.
void attention_bf16(const AttentionSizes& sizes, float scale, bool causal, const float* q, const float* k,
                    const float* v, float* out);

// Bytes outside the arena the kernel holds while it runs (the packed keys and values, each
// thread's rows): for the memory check before a network runs.
std::uint64_t attention_bf16_workspace_bytes(const AttentionSizes& sizes);

// Drops the calling thread's packed keys and values (see conv_release_caches).
void attention_release_caches();

}  // namespace websd::cpu
