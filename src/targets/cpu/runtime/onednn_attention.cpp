#include "targets/cpu/runtime/onednn_attention.h"

#include <omp.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_runtime.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
constexpr auto kBf16 = memory::data_type::bf16;

using AttentionKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;  // rows, kv_len, dim, v_dim

// Both products run on many threads at once: oneDNN's own scratchpad belongs to the primitive (made
// in the thread that created it), so each thread hands it scratch memory of its own (user mode).
struct AttentionPlan {
  dnnl::matmul scores;    // [rows, dim] x [dim, kv_len] -> f32 [rows, kv_len]
  dnnl::matmul weighted;  // [rows, kv_len] x [kv_len, v_dim] -> f32 [rows, v_dim]
  memory::desc scores_scratchpad, weighted_scratchpad;
  std::size_t scratchpad_bytes = 0;  // the larger of the two
};

PrimitiveCache<AttentionKey, AttentionPlan>& plans() {
  static PrimitiveCache<AttentionKey, AttentionPlan> instance;
  return instance;
}

// The narrowed keys and values, and each pool thread's block buffers (indexed by its OpenMP thread
// number), kept by the calling thread across calls so a call does not page-fault fresh memory.
struct ThreadScratch {
  std::vector<std::uint16_t> keys, values, queries, probabilities;
  std::vector<float> scores, inverse_sums;
  std::vector<std::byte> onednn;  // the primitives' scratchpads
};
thread_local ThreadScratch thread_scratch;

template <typename T>
T* sized(std::vector<T>& buffer, std::int64_t count) {
  if (buffer.size() < static_cast<std::size_t>(count)) buffer.resize(static_cast<std::size_t>(count));
  return buffer.data();
}

memory::desc matrix(std::int64_t rows, std::int64_t columns, memory::data_type type, Tag tag = Tag::ab) {
  return {{rows, columns}, type, tag};
}

// A head's K as stored, [kv_len, dim] row-major, is the first product's [dim, kv_len] operand
// transposed (ba).
memory::desc keys_desc(const AttentionSizes& s) { return matrix(s.dim, s.kv_len, kBf16, Tag::ba); }

const AttentionPlan& plan_for(const AttentionSizes& s, std::int64_t rows) {
  return plans().get({rows, s.kv_len, s.dim, s.v_dim}, [&] {
    if (!onednn_bf16_available()) {
      throw Error("cpu",
                  "this attention computes in bf16 (a --dtype bf16 build) but this CPU has no native bf16 "
                  "(AVX512-BF16 or AMX): use --dtype f32 here");
    }
    const auto& engine = onednn_runtime().engine;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::primitive_desc scores(
        dnnl::matmul::desc(matrix(rows, s.dim, kBf16), keys_desc(s), matrix(rows, s.kv_len, kF32)), attr, engine);
    const dnnl::matmul::primitive_desc weighted(
        dnnl::matmul::desc(matrix(rows, s.kv_len, kBf16), matrix(s.kv_len, s.v_dim, kBf16),
                           matrix(rows, s.v_dim, kF32)),
        attr, engine);
    return AttentionPlan{dnnl::matmul(scores), dnnl::matmul(weighted), scores.scratchpad_desc(),
                         weighted.scratchpad_desc(),
                         std::max(scores.scratchpad_desc().get_size(), weighted.scratchpad_desc().get_size())};
  });
}

// `rows` rows of `width` values narrowed to bf16, spread over the threads.
void narrow_rows(const float* from, std::uint16_t* to, std::int64_t rows, std::int64_t width) {
  parallel_for(rows, 16, [&](std::int64_t begin, std::int64_t end) {
    narrow_to_bf16(from + begin * width, to + begin * width, (end - begin) * width);
  });
}

std::string sizes_text(const AttentionSizes& s) {
  return "q [" + std::to_string(s.heads) + "," + std::to_string(s.q_len) + "," + std::to_string(s.dim) + "], k [" +
         std::to_string(s.heads) + "," + std::to_string(s.kv_len) + "," + std::to_string(s.dim) + "], v [" +
         std::to_string(s.heads) + "," + std::to_string(s.kv_len) + "," + std::to_string(s.v_dim) + "]";
}

template <typename Body>
auto with_onednn_errors(const AttentionSizes& s, const Body& body) {
  try {
    return body();
  } catch (const dnnl::error& error) {
    throw Error("cpu", std::string("oneDNN bf16 attention failed: ") + error.what() + " for " + sizes_text(s));
  }
}

}  // namespace

void onednn_attention_bf16(const AttentionSizes& s, float scale, bool causal, std::int64_t block_rows, const float* q,
                           const float* k, const float* v, float* out) {
  with_onednn_errors(s, [&] {
    const std::int64_t kv_len = s.kv_len, dim = s.dim, v_dim = s.v_dim;
    const std::int64_t block = std::clamp<std::int64_t>(block_rows, 1, s.q_len);
    const std::int64_t blocks_per_head = (s.q_len + block - 1) / block;
    // Both shapes' primitives made here, outside the pool: making one takes a lock and JIT-compiles.
    const AttentionPlan& full = plan_for(s, block);
    const AttentionPlan& last = plan_for(s, s.q_len - (blocks_per_head - 1) * block);
    const auto& engine = onednn_runtime().engine;
    const std::int64_t threads = omp_get_max_threads();
    ThreadScratch& scratch = thread_scratch;
    std::uint16_t* keys = sized(scratch.keys, s.heads * kv_len * dim);
    std::uint16_t* values = sized(scratch.values, s.heads * kv_len * v_dim);
    std::uint16_t* queries = sized(scratch.queries, threads * block * dim);
    std::uint16_t* probabilities = sized(scratch.probabilities, threads * block * kv_len);
    float* scores = sized(scratch.scores, threads * block * kv_len);
    float* inverse_sums = sized(scratch.inverse_sums, threads * block);
    // Each thread's scratchpad starts on a page of its own (aligned as oneDNN's own allocations).
    constexpr std::int64_t kPage = 4096;
    const auto scratchpad_bytes =
        (static_cast<std::int64_t>(std::max(full.scratchpad_bytes, last.scratchpad_bytes)) + kPage - 1) / kPage * kPage;
    std::byte* onednn_scratch = sized(scratch.onednn, threads * scratchpad_bytes + kPage);
    onednn_scratch += (kPage - reinterpret_cast<std::uintptr_t>(onednn_scratch) % kPage) % kPage;
    narrow_rows(k, keys, s.heads * kv_len, dim);
    narrow_rows(v, values, s.heads * kv_len, v_dim);
    // One task per (head, query block), as the f32 kernel; each matmul runs on its task's thread.
    parallel_for(s.heads * blocks_per_head, 1, [&](std::int64_t task_begin, std::int64_t task_end) {
      const std::int64_t thread = omp_get_thread_num();
      std::uint16_t* my_queries = queries + thread * block * dim;
      std::uint16_t* my_probabilities = probabilities + thread * block * kv_len;
      float* my_scores = scores + thread * block * kv_len;
      float* my_inverse_sums = inverse_sums + thread * block;
      std::byte* my_onednn_scratch = onednn_scratch + thread * scratchpad_bytes;
      dnnl::stream stream(engine);  // a stream of this thread's own
      for (std::int64_t task = task_begin; task < task_end; ++task) {
        const std::int64_t head = task / blocks_per_head, row0 = (task % blocks_per_head) * block;
        const std::int64_t rows = std::min(block, s.q_len - row0);
        const AttentionPlan& plan = rows == block ? full : last;
        narrow_to_bf16(q + (head * s.q_len + row0) * dim, my_queries, rows * dim, scale);
        plan.scores.execute(stream, {{DNNL_ARG_SRC, memory(matrix(rows, dim, kBf16), engine, my_queries)},
                                     {DNNL_ARG_WEIGHTS, memory(keys_desc(s), engine, keys + head * kv_len * dim)},
                                     {DNNL_ARG_DST, memory(matrix(rows, kv_len, kF32), engine, my_scores)},
                                     {DNNL_ARG_SCRATCHPAD, memory(plan.scores_scratchpad, engine, my_onednn_scratch)}});
        // Unnormalised softmax (maximum, exponentials and sum in f32), each exponential narrowed
        // for the second product: the division by the row sum comes after it, on v_dim values per
        // row instead of kv_len.
        for (std::int64_t r = 0; r < rows; ++r) {
          float* row = my_scores + r * kv_len;
          std::uint16_t* narrowed = my_probabilities + r * kv_len;
          const std::int64_t visible = attention_visible_keys(causal, row0 + r, s.q_len, kv_len);
          my_inverse_sums[r] = 1.0f / exp_shifted_sum_to_bf16(row, narrowed, visible, max_of(row, visible));
          std::fill(narrowed + visible, narrowed + kv_len, std::uint16_t{0});
        }
        float* out_block = out + (head * s.q_len + row0) * v_dim;
        plan.weighted.execute(
            stream, {{DNNL_ARG_SRC, memory(matrix(rows, kv_len, kBf16), engine, my_probabilities)},
                     {DNNL_ARG_WEIGHTS, memory(matrix(kv_len, v_dim, kBf16), engine, values + head * kv_len * v_dim)},
                     {DNNL_ARG_DST, memory(matrix(rows, v_dim, kF32), engine, out_block)},
                     {DNNL_ARG_SCRATCHPAD, memory(plan.weighted_scratchpad, engine, my_onednn_scratch)}});
        for (std::int64_t r = 0; r < rows; ++r) scale_in_place(out_block + r * v_dim, v_dim, my_inverse_sums[r]);
      }
      stream.wait();
    });
  });
}

std::uint64_t attention_bf16_workspace_bytes(const AttentionSizes& s, std::int64_t block_rows) {
  const std::int64_t block = std::clamp<std::int64_t>(block_rows, 1, std::max<std::int64_t>(1, s.q_len));
  const std::int64_t threads = omp_get_max_threads();
  const std::int64_t narrowed = s.heads * s.kv_len * (s.dim + s.v_dim) + threads * block * (s.dim + s.kv_len);
  const std::int64_t f32 = threads * block * (s.kv_len + 1);
  const std::size_t scratchpad = with_onednn_errors(s, [&] { return plan_for(s, block).scratchpad_bytes; });
  return static_cast<std::uint64_t>(narrowed) * sizeof(std::uint16_t) +
         static_cast<std::uint64_t>(f32) * sizeof(float) + static_cast<std::uint64_t>(threads) * scratchpad;
}

void attention_release_caches() {
  plans().clear();
  thread_scratch = ThreadScratch{};
}

}  // namespace websd::cpu
