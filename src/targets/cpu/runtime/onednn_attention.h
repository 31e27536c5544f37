// Attention softmax(q k^T * scale) v whose two products take bf16 operands and accumulate in f32
// (attention nodes with compute = "bf16"), laid out as the f32 kernel (attention_kernels.cpp): one
// task per (head, block of query rows), each on one thread with its block's scores in that core's
// cache. Once per call, K and V are narrowed to bf16 and packed in the layouts the products read
// (AMX or VNNI blockings). In a task the scaled queries are narrowed, oneDNN's matmul (run inside
// the thread pool, oneDNN runs it on the calling thread) makes the f32 scores, the softmax's
// maximum, exponentials and sums stay f32, its unnormalised probabilities are narrowed for the
// second matmul with V, and each output row is divided by its sum. Buffers belong to the calling
// thread; primitives are cached per shape.
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

// q [heads, q_len, dim], k [heads, kv_len, dim], v [heads, kv_len, v_dim] and out [heads, q_len, v_dim],
// all f32 and dense. With `causal`, query i sees keys up to i (queries aligned with the end of the
// keys). `block_rows` query rows per task. Needs a CPU with native bf16
// (bf16_support.h); throws websd::Error elsewhere.
void onednn_attention_bf16(const AttentionSizes& sizes, float scale, bool causal, std::int64_t block_rows,
                           const float* q, const float* k, const float* v, float* out);

// Bytes outside the arena the kernel holds while it runs (narrowed keys and values, each thread's
// block of queries, scores and probabilities, oneDNN's scratchpads): for the memory check before a
// network runs.
std::uint64_t attention_bf16_workspace_bytes(const AttentionSizes& sizes, std::int64_t block_rows);

// Drops the cached primitives and the calling thread's buffers (see conv_release_caches).
void attention_release_caches();

}  // namespace websd::cpu
