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

using namespace onednn_names;

using AttentionKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;  // rows, kv_len, dim, v_dim

// One block shape per call (a partial last block is padded): both products read K and V in the
// layout their primitives chose (AMX and VNNI blockings), packed once per call rather than by
// every task. Both products run on many threads at once: oneDNN's own scratchpad belongs to the
// primitive (made in the thread that created it), so each thread hands it scratch memory of its
// own (user mode).
struct AttentionPlan {
  dnnl::matmul scores;                      // [rows, dim] x [dim, kv_len] -> f32 [rows, kv_len]
  dnnl::matmul weighted;                    // [rows, kv_len] x [kv_len, v_dim] -> f32 [rows, v_dim]
  memory::desc packed_keys, packed_values;  // one head's K and V as the products read them
  dnnl::reorder pack_keys, pack_values;     // from one head's f32 K and V
  memory::desc scores_scratchpad, weighted_scratchpad;
  std::size_t scratchpad_bytes = 0;  // the larger of the two
};

PrimitiveCache<AttentionKey, AttentionPlan>& plans() {
  static PrimitiveCache<AttentionKey, AttentionPlan> instance;
  return instance;
}

// The packed keys and values, and each pool thread's block buffers (indexed by its OpenMP thread
// number), kept by the calling thread across calls so a call does not page-fault fresh memory.
struct ThreadScratch {
  std::vector<std::byte> keys, values, onednn;  // onednn: the primitives' scratchpads
  std::vector<std::uint16_t> queries, probabilities;
  std::vector<float> scores, out, inverse_sums;
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
memory::desc keys_desc(const AttentionSizes& s, memory::data_type type) {
  return matrix(s.dim, s.kv_len, type, Tag::ba);
}

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
    const memory::desc any_keys = matrix(s.dim, s.kv_len, kBf16, Tag::any);
    const memory::desc any_values = matrix(s.kv_len, s.v_dim, kBf16, Tag::any);
    const dnnl::matmul::primitive_desc scores(
        dnnl::matmul::desc(matrix(rows, s.dim, kBf16), any_keys, matrix(rows, s.kv_len, kF32)), attr, engine);
    const dnnl::matmul::primitive_desc weighted(
        dnnl::matmul::desc(matrix(rows, s.kv_len, kBf16), any_values, matrix(rows, s.v_dim, kF32)), attr, engine);
    const dnnl::reorder::primitive_desc pack_keys(engine, keys_desc(s, kF32), engine, scores.weights_desc());
    const dnnl::reorder::primitive_desc pack_values(engine, matrix(s.kv_len, s.v_dim, kF32), engine,
                                                    weighted.weights_desc());
    return AttentionPlan{dnnl::matmul(scores),
                         dnnl::matmul(weighted),
                         scores.weights_desc(),
                         weighted.weights_desc(),
                         dnnl::reorder(pack_keys),
                         dnnl::reorder(pack_values),
                         scores.scratchpad_desc(),
                         weighted.scratchpad_desc(),
                         std::max(scores.scratchpad_desc().get_size(), weighted.scratchpad_desc().get_size())};
  });
}

std::string sizes_text(const AttentionSizes& s) {
  return "q [" + std::to_string(s.heads) + "," + std::to_string(s.q_len) + "," + std::to_string(s.dim) + "], k [" +
         std::to_string(s.heads) + "," + std::to_string(s.kv_len) + "," + std::to_string(s.dim) + "], v [" +
         std::to_string(s.heads) + "," + std::to_string(s.kv_len) + "," + std::to_string(s.v_dim) + "]";
}

template <typename Body>
auto with_onednn_errors(const AttentionSizes& s, const Body& body) {
  return with_onednn_errors(
      "bf16 attention", [&] { return sizes_text(s); }, body);
}

}  // namespace

void onednn_attention_bf16(const AttentionSizes& s, float scale, bool causal, std::int64_t block_rows, const float* q,
                           const float* k, const float* v, float* out) {
  with_onednn_errors(s, [&] {
    const std::int64_t kv_len = s.kv_len, dim = s.dim, v_dim = s.v_dim;
    const std::int64_t block = std::clamp<std::int64_t>(block_rows, 1, s.q_len);
    const std::int64_t blocks_per_head = (s.q_len + block - 1) / block;
    const AttentionPlan& plan = plan_for(s, block);  // made here, outside the pool: it takes a lock and JIT-compiles
    const auto& engine = onednn_runtime().engine;
    auto& stream = onednn_runtime().stream;
    const std::int64_t threads = omp_get_max_threads();
    const auto key_bytes = static_cast<std::int64_t>(plan.packed_keys.get_size());
    const auto value_bytes = static_cast<std::int64_t>(plan.packed_values.get_size());
    ThreadScratch& scratch = thread_scratch;
    std::byte* keys = sized(scratch.keys, s.heads * key_bytes);
    std::byte* values = sized(scratch.values, s.heads * value_bytes);
    std::uint16_t* queries = sized(scratch.queries, threads * block * dim);
    std::uint16_t* probabilities = sized(scratch.probabilities, threads * block * kv_len);
    float* scores = sized(scratch.scores, threads * block * kv_len);
    float* block_out = sized(scratch.out, threads * block * v_dim);
    float* inverse_sums = sized(scratch.inverse_sums, threads * block);
    // Each thread's scratchpad starts on a page of its own (aligned as oneDNN's own allocations).
    constexpr std::int64_t kPage = 4096;
    const auto scratchpad_bytes = (static_cast<std::int64_t>(plan.scratchpad_bytes) + kPage - 1) / kPage * kPage;
    std::byte* onednn_scratch = sized(scratch.onednn, threads * scratchpad_bytes + kPage);
    onednn_scratch += (kPage - reinterpret_cast<std::uintptr_t>(onednn_scratch) % kPage) % kPage;
    // Every head's K and V narrowed and packed once (each reorder spread over the threads).
    for (std::int64_t head = 0; head < s.heads; ++head) {
      memory k_head(keys_desc(s, kF32), engine, const_cast<float*>(k + head * kv_len * dim));
      memory k_packed(plan.packed_keys, engine, keys + head * key_bytes);
      plan.pack_keys.execute(stream, k_head, k_packed);
      memory v_head(matrix(kv_len, v_dim, kF32), engine, const_cast<float*>(v + head * kv_len * v_dim));
      memory v_packed(plan.packed_values, engine, values + head * value_bytes);
      plan.pack_values.execute(stream, v_head, v_packed);
    }
    stream.wait();
    // One task per (head, query block), as the f32 kernel; each matmul runs on its task's thread.
    parallel_for(s.heads * blocks_per_head, 1, [&](std::int64_t task_begin, std::int64_t task_end) {
      const std::int64_t thread = omp_get_thread_num();
      std::uint16_t* my_queries = queries + thread * block * dim;
      std::uint16_t* my_probabilities = probabilities + thread * block * kv_len;
      float* my_scores = scores + thread * block * kv_len;
      float* my_out = block_out + thread * block * v_dim;
      float* my_inverse_sums = inverse_sums + thread * block;
      std::byte* my_onednn_scratch = onednn_scratch + thread * scratchpad_bytes;
      dnnl::stream my_stream(engine);  // a stream of this thread's own
      const memory query_memory(matrix(block, dim, kBf16), engine, my_queries);
      const memory score_memory(matrix(block, kv_len, kF32), engine, my_scores);
      const memory probability_memory(matrix(block, kv_len, kBf16), engine, my_probabilities);
      const memory out_memory(matrix(block, v_dim, kF32), engine, my_out);
      for (std::int64_t task = task_begin; task < task_end; ++task) {
        const std::int64_t head = task / blocks_per_head, row0 = (task % blocks_per_head) * block;
        const std::int64_t rows = std::min(block, s.q_len - row0);
        // A partial last block is padded with zero queries, whose rows are computed and dropped.
        narrow_to_bf16(q + (head * s.q_len + row0) * dim, my_queries, rows * dim, scale);
        std::fill(my_queries + rows * dim, my_queries + block * dim, std::uint16_t{0});
        plan.scores.execute(my_stream,
                            {{DNNL_ARG_SRC, query_memory},
                             {DNNL_ARG_WEIGHTS, memory(plan.packed_keys, engine, keys + head * key_bytes)},
                             {DNNL_ARG_DST, score_memory},
                             {DNNL_ARG_SCRATCHPAD, memory(plan.scores_scratchpad, engine, my_onednn_scratch)}});
        // Unnormalised softmax (maximum, exponentials and sum in f32), each exponential narrowed
        // for the second product: the division by the row sum comes after it, on v_dim values per
        // row instead of kv_len.
        for (std::int64_t r = 0; r < rows; ++r) {
          const float* row = my_scores + r * kv_len;
          std::uint16_t* narrowed = my_probabilities + r * kv_len;
          const std::int64_t visible = attention_visible_keys(causal, row0 + r, s.q_len, kv_len);
          my_inverse_sums[r] = 1.0f / exp_shifted_sum_to_bf16(row, narrowed, visible, max_of(row, visible));
          std::fill(narrowed + visible, narrowed + kv_len, std::uint16_t{0});
        }
        std::fill(my_probabilities + rows * kv_len, my_probabilities + block * kv_len, std::uint16_t{0});
        plan.weighted.execute(my_stream,
                              {{DNNL_ARG_SRC, probability_memory},
                               {DNNL_ARG_WEIGHTS, memory(plan.packed_values, engine, values + head * value_bytes)},
                               {DNNL_ARG_DST, out_memory},
                               {DNNL_ARG_SCRATCHPAD, memory(plan.weighted_scratchpad, engine, my_onednn_scratch)}});
        for (std::int64_t r = 0; r < rows; ++r) {
          const float* from = my_out + r * v_dim;
          float* to = out + (head * s.q_len + row0 + r) * v_dim;
          for (std::int64_t j = 0; j < v_dim; ++j) to[j] = from[j] * my_inverse_sums[r];
        }
      }
      my_stream.wait();
    });
  });
}

std::uint64_t attention_bf16_workspace_bytes(const AttentionSizes& s, std::int64_t block_rows) {
  const std::int64_t block = std::clamp<std::int64_t>(block_rows, 1, std::max<std::int64_t>(1, s.q_len));
  const std::int64_t threads = omp_get_max_threads();
  return with_onednn_errors(s, [&] {
    const AttentionPlan& plan = plan_for(s, block);
    const std::uint64_t packed =
        static_cast<std::uint64_t>(s.heads) * (plan.packed_keys.get_size() + plan.packed_values.get_size());
    const std::uint64_t per_thread = static_cast<std::uint64_t>(block * (s.dim + s.kv_len)) * sizeof(std::uint16_t) +
                                     static_cast<std::uint64_t>(block * (s.kv_len + s.v_dim + 1)) * sizeof(float) +
                                     plan.scratchpad_bytes + 4096;
    return packed + static_cast<std::uint64_t>(threads) * per_thread;
  });
}

void attention_release_caches() {
  plans().clear();
  thread_scratch = ThreadScratch{};
}

}  // namespace websd::cpu
