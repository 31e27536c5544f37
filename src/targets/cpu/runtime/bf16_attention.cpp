#include "targets/cpu/runtime/bf16_attention.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

// The kernel's inner functions are compiled for AVX512-BF16 whatever the build's -march; they run
// only where bf16_attention_available() holds.
#define WEBSD_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")))

namespace websd::cpu {
namespace {

constexpr std::int64_t kLanes = 16;                       // f32 lanes of a vector
constexpr std::int64_t kKeyBlock = 64;                    // keys per step of the online softmax
constexpr std::int64_t kKeyVectors = kKeyBlock / kLanes;  // score vectors per row of a block
constexpr std::int64_t kKeyPairs = kKeyBlock / 2;         // the second product's steps per block
constexpr std::int64_t kTileRows = 6;                     // query rows per register tile
constexpr std::int64_t kTaskRows = 4 * kTileRows;         // query rows per task
constexpr std::int64_t kTileValueVectors = 4;             // output vectors per register tile (at most)
constexpr float kLog2e = 1.44269504088896341f;

// How one head's operands are laid out for the products: bf16 values in pairs (two consecutive
// widths of a key, or one width of two consecutive keys), so that each 32-bit lane of a vector
// feeds one VDPBF16PS product pair.
struct Packing {
  std::int64_t dim_pairs;      // pairs per query or key row (an odd width padded with a zero)
  std::int64_t key_blocks;     // blocks of 64 keys (the last padded with zero keys)
  std::int64_t value_vectors;  // 16-wide vectors per value row (padded with zeros)

  explicit Packing(const AttentionSizes& s)
      : dim_pairs((s.dim + 1) / 2),
        key_blocks((s.kv_len + kKeyBlock - 1) / kKeyBlock),
        value_vectors((s.v_dim + kLanes - 1) / kLanes) {}
  std::int64_t padded_keys() const { return key_blocks * kKeyBlock; }
  std::int64_t row_width() const { return 2 * dim_pairs; }  // bf16 per packed query or key row
  std::int64_t value_width() const { return value_vectors * kLanes; }
  // K: for each tile of 16 keys and each pair p, 16 lanes of (k[key][2p], k[key][2p + 1]).
  std::int64_t key_tile_size() const { return kLanes * row_width(); }
  std::int64_t key_elements() const { return padded_keys() * row_width(); }
  // V: for each pair of keys (2j, 2j + 1) and each width d, the lane (v[2j][d], v[2j + 1][d]).
  std::int64_t value_pair_size() const { return 2 * value_width(); }
  std::int64_t value_elements() const { return padded_keys() * value_width(); }
};

// x[0, count) * factor narrowed into bits[0, padded), zeros after; all zeros for a null x.
void narrow_row(const float* x, std::int64_t count, std::int64_t padded, std::uint16_t* bits, float factor = 1.0f) {
  if (x == nullptr) count = 0;
  if (count > 0) narrow_to_bf16(x, bits, count, factor);
  std::fill(bits + count, bits + padded, std::uint16_t{0});
}

void pack_keys(const AttentionSizes& s, const Packing& pk, const float* k, std::uint16_t* row, std::uint16_t* packed) {
  for (std::int64_t key = 0; key < pk.padded_keys(); ++key) {
    narrow_row(key < s.kv_len ? k + key * s.dim : nullptr, s.dim, pk.row_width(), row);
    std::uint16_t* lane = packed + key / kLanes * pk.key_tile_size() + key % kLanes * 2;
    for (std::int64_t p = 0; p < pk.dim_pairs; ++p) {
      lane[p * 2 * kLanes] = row[2 * p];
      lane[p * 2 * kLanes + 1] = row[2 * p + 1];
    }
  }
}

void pack_values(const AttentionSizes& s, const Packing& pk, const float* v, std::uint16_t* even, std::uint16_t* odd,
                 std::uint16_t* packed) {
  const std::int64_t width = pk.value_width();
  for (std::int64_t key = 0; key < pk.padded_keys(); key += 2) {
    narrow_row(key < s.kv_len ? v + key * s.v_dim : nullptr, s.v_dim, width, even);
    narrow_row(key + 1 < s.kv_len ? v + (key + 1) * s.v_dim : nullptr, s.v_dim, width, odd);
    std::uint16_t* pair = packed + key / 2 * pk.value_pair_size();
    for (std::int64_t d = 0; d < width; ++d) {
      pair[2 * d] = even[d];
      pair[2 * d + 1] = odd[d];
    }
  }
}

WEBSD_AVX512_BF16 inline __m512bh broadcast_pair(const std::uint16_t* pair) {
  std::int32_t word;
  std::memcpy(&word, pair, sizeof word);
  return reinterpret_cast<__m512bh>(_mm512_set1_epi32(word));
}

WEBSD_AVX512_BF16 inline __m512bh load_pairs(const std::uint16_t* pairs) {
  return reinterpret_cast<__m512bh>(_mm512_loadu_si512(pairs));
}

// 2^t for finite t <= 0: t = n + f with |f| <= 1/2, 2^f by a degree-5 polynomial (relative error
// 1.5e-7), times 2^n by scalef (0 below -149).
WEBSD_AVX512_BF16 inline __m512 exp2_16(__m512 t) {
  const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(t, n);
  __m512 p = _mm512_set1_ps(1.32669705e-3f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.67545975e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.55074262e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.40221218e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.93146949e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.00000007f));
  return _mm512_scalef_ps(p, n);
}

inline __mmask16 lanes_below(std::int64_t count) {
  if (count <= 0) return 0;
  return count >= kLanes ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << count) - 1);
}

// The first product for one register tile: 6 query rows against the 64 keys of a block,
// scores[r * 64 + key] (in log2 units: the queries carry scale * log2(e)).
WEBSD_AVX512_BF16 void score_tile(const Packing& pk, const std::uint16_t* queries, const std::uint16_t* block_keys,
                                  float* scores) {
  __m512 acc[kTileRows][kKeyVectors];
#pragma GCC unroll 6
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < kKeyVectors; ++t) acc[r][t] = _mm512_setzero_ps();
  const std::int64_t tile_size = pk.key_tile_size(), row_width = pk.row_width();
  for (std::int64_t p = 0; p < pk.dim_pairs; ++p) {
    __m512bh keys[kKeyVectors];
#pragma GCC unroll 4
    for (int t = 0; t < kKeyVectors; ++t) keys[t] = load_pairs(block_keys + t * tile_size + p * 2 * kLanes);
#pragma GCC unroll 6
    for (int r = 0; r < kTileRows; ++r) {
      const __m512bh query = broadcast_pair(queries + r * row_width + 2 * p);
#pragma GCC unroll 4
      for (int t = 0; t < kKeyVectors; ++t) acc[r][t] = _mm512_dpbf16_ps(acc[r][t], keys[t], query);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kTileRows; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < kKeyVectors; ++t) _mm512_storeu_ps(scores + r * kKeyBlock + t * kLanes, acc[r][t]);
}

// One row's step of the online softmax over a block's `valid` keys (1 to 64). The shift is an
// integer at least the row's largest score so far: the first block sets it to that block's
// maximum rounded up plus kShiftHeadroom, and a later block raises it (the same way) only if one of
// its scores exceeds it, so most blocks need no horizontal maximum. The headroom costs no
// precision: probabilities of 2^-16 and far below are normal numbers in f32 and bf16 alike. The
// probabilities 2^(s - shift) are narrowed into the row's 64 bf16 slots (zero past `valid`) and
// added, unrounded, to the row's 16 lane sums. Returns the factor 2^(old shift - new shift) by which
// the row's sums and output were rescaled (0 at the first block, 1 when the shift stays).
constexpr float kShiftHeadroom = 16.0f;

WEBSD_AVX512_BF16 float block_probabilities(const float* scores, std::int64_t valid, float& shift, float* sums,
                                            std::uint16_t* probabilities) {
  __mmask16 mask[kKeyVectors];
  __m512 s[kKeyVectors];
  __m512 shift16 = _mm512_set1_ps(shift);
  __mmask16 exceeds = 0;
#pragma GCC unroll 4
  for (int t = 0; t < kKeyVectors; ++t) {
    mask[t] = lanes_below(valid - t * kLanes);
    s[t] = _mm512_maskz_loadu_ps(mask[t], scores + t * kLanes);
    exceeds |= _mm512_mask_cmp_ps_mask(mask[t], s[t], shift16, _CMP_GT_OQ);
  }
  float rescale = 1.0f;
  if (exceeds != 0) {
    __m512 top = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
#pragma GCC unroll 4
    for (int t = 0; t < kKeyVectors; ++t) top = _mm512_mask_max_ps(top, mask[t], top, s[t]);
    const float new_shift = std::ceil(_mm512_reduce_max_ps(top)) + kShiftHeadroom;
    rescale = std::exp2(shift - new_shift);
    shift = new_shift;
    shift16 = _mm512_set1_ps(new_shift);
  }
  __m512 sum = _mm512_mul_ps(_mm512_loadu_ps(sums), _mm512_set1_ps(rescale));
  __m512 p[kKeyVectors];
#pragma GCC unroll 4
  for (int t = 0; t < kKeyVectors; ++t) {
    p[t] = _mm512_maskz_mov_ps(mask[t], exp2_16(_mm512_sub_ps(s[t], shift16)));
    sum = _mm512_add_ps(sum, p[t]);
  }
  _mm512_storeu_ps(sums, sum);
  _mm512_storeu_si512(probabilities, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(p[1], p[0])));
  _mm512_storeu_si512(probabilities + 2 * kLanes, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(p[3], p[2])));
  return rescale;
}

// The second product for one register tile: 6 rows of output, `Full` 16-wide vectors of them
// starting at `out` and, with `Half`, 8 more widths (a value row's last 1 to 8, in a 256-bit vector:
// half the work of a padded one), rescaled by their rows' factors and added the block's
// probabilities times values (`block_values` at the tile's first vector).
template <int Full, bool Half>
WEBSD_AVX512_BF16 void value_tile(const Packing& pk, const std::uint16_t* probabilities,
                                  const std::uint16_t* block_values, const float* rescale, float* out) {
  const std::int64_t width = pk.value_width(), pair_size = pk.value_pair_size();
  __m512 acc[kTileRows][Full > 0 ? Full : 1];
  __m256 half[kTileRows];
#pragma GCC unroll 6
  for (int r = 0; r < kTileRows; ++r) {
    const __m512 factor = _mm512_set1_ps(rescale[r]);
#pragma GCC unroll 4
    for (int j = 0; j < Full; ++j) acc[r][j] = _mm512_mul_ps(_mm512_loadu_ps(out + r * width + j * kLanes), factor);
    if constexpr (Half) {
      half[r] = _mm256_mul_ps(_mm256_loadu_ps(out + r * width + Full * kLanes), _mm512_castps512_ps256(factor));
    }
  }
  for (std::int64_t pair = 0; pair < kKeyPairs; ++pair) {
    const std::uint16_t* pair_values = block_values + pair * pair_size;
    __m512bh values[Full > 0 ? Full : 1];
#pragma GCC unroll 4
    for (int j = 0; j < Full; ++j) values[j] = load_pairs(pair_values + j * 2 * kLanes);
    __m256bh half_values{};
    if constexpr (Half) {
      half_values = reinterpret_cast<__m256bh>(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair_values + Full * 2 * kLanes)));
    }
#pragma GCC unroll 6
    for (int r = 0; r < kTileRows; ++r) {
      const __m512bh weight = broadcast_pair(probabilities + r * kKeyBlock + 2 * pair);
#pragma GCC unroll 4
      for (int j = 0; j < Full; ++j) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], values[j], weight);
      if constexpr (Half) {
        half[r] =
            _mm256_dpbf16_ps(half[r], half_values,
                             reinterpret_cast<__m256bh>(_mm512_castsi512_si256(reinterpret_cast<__m512i>(weight))));
      }
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kTileRows; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < Full; ++j) _mm512_storeu_ps(out + r * width + j * kLanes, acc[r][j]);
    if constexpr (Half) _mm256_storeu_ps(out + r * width + Full * kLanes, half[r]);
  }
}

// value_tile for a tile of 1 to 4 vectors (index: vectors - 1), all full or the last a half one.
using ValueTile = void (*)(const Packing&, const std::uint16_t*, const std::uint16_t*, const float*, float*);
constexpr ValueTile kFullTiles[] = {&value_tile<1, false>, &value_tile<2, false>, &value_tile<3, false>,
                                    &value_tile<4, false>};
constexpr ValueTile kHalfTiles[] = {&value_tile<0, true>, &value_tile<1, true>, &value_tile<2, true>,
                                    &value_tile<3, true>};

WEBSD_AVX512_BF16 void value_tiles(const AttentionSizes& s, const Packing& pk, const std::uint16_t* probabilities,
                                   const std::uint16_t* block_values, const float* rescale, float* out) {
  const std::int64_t tail = s.v_dim % kLanes;  // widths in the last vector when it is partial
  for (std::int64_t first = 0; first < pk.value_vectors; first += kTileValueVectors) {
    const std::int64_t vectors = std::min(kTileValueVectors, pk.value_vectors - first);
    const bool half = first + vectors == pk.value_vectors && tail > 0 && tail <= kLanes / 2;
    const std::uint16_t* values = block_values + first * 2 * kLanes;
    float* tile_out = out + first * kLanes;
    const ValueTile tile = (half ? kHalfTiles : kFullTiles)[vectors - 1];
    tile(pk, probabilities, values, rescale, tile_out);
  }
}

// One task's buffers: its 24 rows' queries, one block's scores and probabilities, the rows' shifts,
// rescale factors, lane sums and unnormalised output.
struct RowBuffers {
  std::vector<std::uint16_t> queries, probabilities;
  std::vector<float> scores, shifts, rescale, sums, out;

  explicit RowBuffers(const Packing& pk)
      : queries(static_cast<std::size_t>(kTaskRows * pk.row_width())),
        probabilities(static_cast<std::size_t>(kTaskRows * kKeyBlock)),
        scores(static_cast<std::size_t>(kTaskRows * kKeyBlock)),
        shifts(kTaskRows),
        rescale(kTaskRows),
        sums(static_cast<std::size_t>(kTaskRows * kLanes)),
        out(static_cast<std::size_t>(kTaskRows * pk.value_width())) {}
  static std::uint64_t bytes(const Packing& pk) {
    return static_cast<std::uint64_t>(kTaskRows) *
           (2 * (pk.row_width() + kKeyBlock) + 4 * (kKeyBlock + 2 + kLanes + pk.value_width()));
  }
};

// Query rows [row0, row0 + 24) of one head (fewer at its end) against all its keys.
WEBSD_AVX512_BF16 void attend_rows(const AttentionSizes& s, const Packing& pk, float query_factor, bool causal,
                                   const float* q, const std::uint16_t* keys, const std::uint16_t* values,
                                   std::int64_t row0, RowBuffers& b, float* out) {
  const std::int64_t rows = std::min(kTaskRows, s.q_len - row0);
  std::int64_t visible[kTaskRows];
  std::int64_t most_visible = 0;
  for (std::int64_t r = 0; r < kTaskRows; ++r) {
    narrow_row(r < rows ? q + (row0 + r) * s.dim : nullptr, s.dim, pk.row_width(),
               b.queries.data() + r * pk.row_width(), query_factor);
    visible[r] = r < rows ? std::max<std::int64_t>(0, attention_visible_keys(causal, row0 + r, s.q_len, s.kv_len)) : 0;
    most_visible = std::max(most_visible, visible[r]);
  }
  std::fill(b.shifts.begin(), b.shifts.end(), -std::numeric_limits<float>::infinity());
  std::fill(b.sums.begin(), b.sums.end(), 0.0f);
  std::fill(b.out.begin(), b.out.end(), 0.0f);
  const std::int64_t width = pk.value_width();
  for (std::int64_t block = 0; block * kKeyBlock < most_visible; ++block) {
    const std::uint16_t* block_keys = keys + block * kKeyVectors * pk.key_tile_size();
    for (std::int64_t tile = 0; tile < kTaskRows; tile += kTileRows) {
      score_tile(pk, b.queries.data() + tile * pk.row_width(), block_keys, b.scores.data() + tile * kKeyBlock);
    }
    for (std::int64_t r = 0; r < kTaskRows; ++r) {
      std::uint16_t* row_probabilities = b.probabilities.data() + r * kKeyBlock;
      const std::int64_t valid = std::clamp<std::int64_t>(visible[r] - block * kKeyBlock, 0, kKeyBlock);
      if (valid == 0) {  // nothing to add: the row's output stays
        b.rescale[r] = 1.0f;
        std::fill(row_probabilities, row_probabilities + kKeyBlock, std::uint16_t{0});
        continue;
      }
      b.rescale[r] = block_probabilities(b.scores.data() + r * kKeyBlock, valid, b.shifts[r],
                                         b.sums.data() + r * kLanes, row_probabilities);
    }
    const std::uint16_t* block_values = values + block * kKeyPairs * pk.value_pair_size();
    for (std::int64_t tile = 0; tile < kTaskRows; tile += kTileRows) {
      value_tiles(s, pk, b.probabilities.data() + tile * kKeyBlock, block_values, b.rescale.data() + tile,
                  b.out.data() + tile * width);
    }
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (std::int64_t lane = 0; lane < kLanes; ++lane) sum += b.sums[r * kLanes + lane];
    const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (std::int64_t d = 0; d < s.v_dim; ++d) out[(row0 + r) * s.v_dim + d] = b.out[r * width + d] * inverse;
  }
}

// Every head's packed K and V, kept by the calling thread across calls so a call does not
// page-fault fresh memory.
struct PackedOperands {
  std::vector<std::uint16_t> keys, values;
};
thread_local PackedOperands packed_operands;

// Nanoseconds for `rounds` of eight independent chains of VDPBF16PS (or of VFMADD): the best of
// three tries, so a preemption does not count.
template <bool Bf16>
WEBSD_AVX512_BF16 double chain_nanoseconds(std::int64_t rounds) {
  double best = std::numeric_limits<double>::infinity();
  for (int attempt = 0; attempt < 3; ++attempt) {
    __m512 acc[8];
    for (int c = 0; c < 8; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));  // distinct: no chains merged
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512bh pairs = reinterpret_cast<__m512bh>(_mm512_set1_epi32(0x3f803f80));  // bf16 (1, 1)
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t round = 0; round < rounds; ++round) {
#pragma GCC unroll 8
      for (int c = 0; c < 8; ++c) {
        if constexpr (Bf16) {
          acc[c] = _mm512_dpbf16_ps(acc[c], pairs, pairs);
        } else {
          acc[c] = _mm512_fmadd_ps(one, one, acc[c]);
        }
      }
    }
    __m512 sum = acc[0];
    for (int c = 1; c < 8; ++c) sum = _mm512_add_ps(sum, acc[c]);
    volatile float sink = _mm512_reduce_add_ps(sum);
    static_cast<void>(sink);
    best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

bool bf16_attention_pays() {
  static const bool pays = [] {
    if (!bf16_attention_available()) return false;
    constexpr std::int64_t kRounds = 20000;  // 160k instructions a try: about 50 us
    return chain_nanoseconds<true>(kRounds) <= chain_nanoseconds<false>(kRounds) / 0.75;
  }();
  return pays;
}

bool bf16_attention_available() {
  static const bool available = __builtin_cpu_supports("avx512bf16");
  return available;
}

void attention_bf16(const AttentionSizes& s, float scale, bool causal, const float* q, const float* k, const float* v,
                    float* out) {
  if (!bf16_attention_available()) {
    throw Error("cpu",
                "this attention computes in bf16 (a --dtype bf16 build) but this CPU has no native bf16 "
                "(AVX512-BF16 or AMX): use --dtype f32 here");
  }
  const Packing pk(s);
  PackedOperands& packed = packed_operands;
  packed.keys.resize(static_cast<std::size_t>(s.heads * pk.key_elements()));
  packed.values.resize(static_cast<std::size_t>(s.heads * pk.value_elements()));
  parallel_for(s.heads, 1, [&](std::int64_t head_begin, std::int64_t head_end) {
    std::vector<std::uint16_t> row(static_cast<std::size_t>(std::max(pk.row_width(), 2 * pk.value_width())));
    for (std::int64_t head = head_begin; head < head_end; ++head) {
      pack_keys(s, pk, k + head * s.kv_len * s.dim, row.data(), packed.keys.data() + head * pk.key_elements());
      pack_values(s, pk, v + head * s.kv_len * s.v_dim, row.data(), row.data() + pk.value_width(),
                  packed.values.data() + head * pk.value_elements());
    }
  });
  const std::int64_t tasks_per_head = (s.q_len + kTaskRows - 1) / kTaskRows;
  parallel_for(s.heads * tasks_per_head, 1, [&](std::int64_t task_begin, std::int64_t task_end) {
    RowBuffers buffers(pk);
    for (std::int64_t task = task_begin; task < task_end; ++task) {
      const std::int64_t head = task / tasks_per_head;
      attend_rows(s, pk, scale * kLog2e, causal, q + head * s.q_len * s.dim,
                  packed.keys.data() + head * pk.key_elements(), packed.values.data() + head * pk.value_elements(),
                  task % tasks_per_head * kTaskRows, buffers, out + head * s.q_len * s.v_dim);
    }
  });
}

std::uint64_t attention_bf16_workspace_bytes(const AttentionSizes& s) {
  const Packing pk(s);
  const auto packed_bytes = static_cast<std::uint64_t>(s.heads * (pk.key_elements() + pk.value_elements())) * 2;
  return packed_bytes + static_cast<std::uint64_t>(omp_get_max_threads()) * RowBuffers::bytes(pk);
}

void attention_release_caches() { packed_operands = PackedOperands{}; }

}  // namespace websd::cpu
