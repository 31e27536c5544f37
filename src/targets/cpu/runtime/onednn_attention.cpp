#include "targets/cpu/runtime/onednn_attention.h"

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

// The f32 scores of one block, every head: what attention_bf16_block_rows aims at.
constexpr std::int64_t kBlockScoreBytes = 16ll << 20;

using AttentionKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

struct AttentionPlan {
  dnnl::matmul scores;    // [heads, rows, dim] x [heads, dim, kv_len] -> f32 [heads, rows, kv_len]
  dnnl::matmul weighted;  // [heads, rows, kv_len] x [heads, kv_len, v_dim] -> f32 [heads, rows, v_dim]
  std::size_t scratchpad_bytes = 0;
};

PrimitiveCache<AttentionKey, AttentionPlan>& plans() {
  static PrimitiveCache<AttentionKey, AttentionPlan> instance;
  return instance;
}

// The narrowed operands and one block's intermediates, kept by the calling thread across calls so
// each call does not page-fault fresh memory.
struct ThreadScratch {
  std::vector<std::uint16_t> k, v, q, probabilities;
  std::vector<float> scores, out, inverse_sums;
};
thread_local ThreadScratch thread_scratch;

template <typename T>
T* sized(std::vector<T>& buffer, std::int64_t count) {
  if (buffer.size() < static_cast<std::size_t>(count)) buffer.resize(static_cast<std::size_t>(count));
  return buffer.data();
}

memory::desc dense(std::int64_t batch, std::int64_t rows, std::int64_t columns, memory::data_type type) {
  return {{batch, rows, columns}, type, Tag::abc};
}

// K as stored, [heads, kv_len, dim], is the first product's [heads, dim, kv_len] operand with its
// last two axes swapped.
memory::desc keys_desc(const AttentionSizes& s) { return {{s.heads, s.dim, s.kv_len}, kBf16, Tag::acb}; }

const AttentionPlan& plan_for(const AttentionSizes& s, std::int64_t rows) {
  return plans().get({s.heads, rows, s.kv_len, s.dim, s.v_dim}, [&] {
    if (!onednn_bf16_available()) {
      throw Error("cpu",
                  "this attention computes in bf16 (a --dtype bf16 build) but this CPU has no native bf16 "
                  "(AVX512-BF16 or AMX): use --dtype f32 here");
    }
    const auto& engine = onednn_runtime().engine;
    const dnnl::matmul::primitive_desc scores(
        dnnl::matmul::desc(dense(s.heads, rows, s.dim, kBf16), keys_desc(s), dense(s.heads, rows, s.kv_len, kF32)),
        engine);
    const dnnl::matmul::primitive_desc weighted(
        dnnl::matmul::desc(dense(s.heads, rows, s.kv_len, kBf16), dense(s.heads, s.kv_len, s.v_dim, kBf16),
                           dense(s.heads, rows, s.v_dim, kF32)),
        engine);
    return AttentionPlan{dnnl::matmul(scores), dnnl::matmul(weighted),
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
    const std::int64_t heads = s.heads, kv_len = s.kv_len, dim = s.dim, v_dim = s.v_dim;
    const std::int64_t block = std::clamp<std::int64_t>(block_rows, 1, s.q_len);
    const auto& engine = onednn_runtime().engine;
    auto& stream = onednn_runtime().stream;
    ThreadScratch& scratch = thread_scratch;
    std::uint16_t* keys = sized(scratch.k, heads * kv_len * dim);
    std::uint16_t* values = sized(scratch.v, heads * kv_len * v_dim);
    std::uint16_t* queries = sized(scratch.q, heads * block * dim);
    std::uint16_t* probabilities = sized(scratch.probabilities, heads * block * kv_len);
    float* scores = sized(scratch.scores, heads * block * kv_len);
    float* block_out = sized(scratch.out, heads * block * v_dim);
    float* inverse_sums = sized(scratch.inverse_sums, heads * block);
    narrow_rows(k, keys, heads * kv_len, dim);
    narrow_rows(v, values, heads * kv_len, v_dim);
    const memory keys_memory(keys_desc(s), engine, keys);
    const memory values_memory(dense(heads, kv_len, v_dim, kBf16), engine, values);
    for (std::int64_t row0 = 0; row0 < s.q_len; row0 += block) {
      const std::int64_t rows = std::min(block, s.q_len - row0);
      const AttentionPlan& plan = plan_for(s, rows);
      // The block's queries of every head, scaled and narrowed: [heads, rows, dim].
      parallel_for(heads * rows, 16, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          const std::int64_t head = i / rows, row = row0 + i % rows;
          narrow_to_bf16(q + (head * s.q_len + row) * dim, queries + i * dim, dim, scale);
        }
      });
      plan.scores.execute(stream, {{DNNL_ARG_SRC, memory(dense(heads, rows, dim, kBf16), engine, queries)},
                                   {DNNL_ARG_WEIGHTS, keys_memory},
                                   {DNNL_ARG_DST, memory(dense(heads, rows, kv_len, kF32), engine, scores)}});
      stream.wait();
      // Unnormalised softmax in f32, narrowed for the second product: the division by the row sum
      // comes after it, on v_dim values per row instead of kv_len.
      parallel_for(heads * rows, 4, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          float* row = scores + i * kv_len;
          std::uint16_t* narrowed = probabilities + i * kv_len;
          const std::int64_t visible = attention_visible_keys(causal, row0 + i % rows, s.q_len, kv_len);
          inverse_sums[i] = 1.0f / exp_shifted_sum(row, row, visible, max_of(row, visible));
          narrow_to_bf16(row, narrowed, visible);
          std::fill(narrowed + visible, narrowed + kv_len, std::uint16_t{0});
        }
      });
      plan.weighted.execute(stream, {{DNNL_ARG_SRC, memory(dense(heads, rows, kv_len, kBf16), engine, probabilities)},
                                     {DNNL_ARG_WEIGHTS, values_memory},
                                     {DNNL_ARG_DST, memory(dense(heads, rows, v_dim, kF32), engine, block_out)}});
      stream.wait();
      parallel_for(heads * rows, 16, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          const std::int64_t head = i / rows, row = row0 + i % rows;
          const float* from = block_out + i * v_dim;
          float* to = out + (head * s.q_len + row) * v_dim;
          for (std::int64_t j = 0; j < v_dim; ++j) to[j] = from[j] * inverse_sums[i];
        }
      });
    }
  });
}

std::int64_t attention_bf16_block_rows(const AttentionSizes& s) {
  const std::int64_t per_row = std::max<std::int64_t>(1, s.heads * s.kv_len * static_cast<std::int64_t>(sizeof(float)));
  return std::clamp<std::int64_t>(kBlockScoreBytes / per_row, 1, std::max<std::int64_t>(1, s.q_len));
}

std::uint64_t attention_bf16_workspace_bytes(const AttentionSizes& s, std::int64_t block_rows) {
  const std::int64_t block = std::clamp<std::int64_t>(block_rows, 1, std::max<std::int64_t>(1, s.q_len));
  const std::int64_t narrowed = s.heads * (s.kv_len * (s.dim + s.v_dim) + block * (s.dim + s.kv_len));
  const std::int64_t f32 = s.heads * block * (s.kv_len + s.v_dim + 1);
  const std::size_t scratchpad = with_onednn_errors(s, [&] { return plan_for(s, block).scratchpad_bytes; });
  return static_cast<std::uint64_t>(narrowed) * sizeof(std::uint16_t) +
         static_cast<std::uint64_t>(f32) * sizeof(float) + scratchpad;
}

void attention_release_caches() {
  plans().clear();
  thread_scratch = ThreadScratch{};
}

}  // namespace websd::cpu
