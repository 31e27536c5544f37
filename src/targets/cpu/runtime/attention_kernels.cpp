// Attention softmax(q k^T * scale) v computed a block of query rows at a time, so the score matrix
// never exists whole: memory is block_rows x kv_length floats instead of q_length x kv_length.
// Nodes with compute = "bf16" run bf16_attention.h's kernel instead (which takes its own blocks) on
// CPUs where it is the faster one.
#include <algorithm>

#include "core/error.h"
#include "targets/cpu/runtime/bf16_attention.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/gemm.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

constexpr std::int64_t kMaxQueryBlock = 4096;

std::int64_t query_block_rows(const Attrs& attrs) {
  const std::int64_t rows = attrs.get_int("block_rows", kDefaultAttentionBlockRows, "attention");
  if (rows < 1 || rows > kMaxQueryBlock) {
    throw Error("cpu", "attention: attribute block_rows = " + std::to_string(rows) + " is outside 1.." +
                           std::to_string(kMaxQueryBlock) + " (fix or delete the tuning record that set it)");
  }
  return rows;
}

void attention_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const auto scale = static_cast<float>(attrs.get_float("scale", "attention"));
  const bool causal = attrs.get_int("causal", 0, "attention") != 0;
  const std::int64_t block_rows = query_block_rows(attrs);
  const Shape& q = in[0]->type.shape;
  const Shape& v = in[2]->type.shape;
  const std::int64_t heads = q[0] * q[1], q_len = q[2], kv_len = v[2], dim = q[3], v_dim = v[3];
  if (computes_in_bf16(attrs, "attention") && (!bf16_attention_available() || bf16_attention_pays())) {
    attention_bf16({heads, q_len, kv_len, dim, v_dim}, scale, causal, in[0]->fdata(), in[1]->fdata(), in[2]->fdata(),
                   out.fdata());
    return;
  }
  const std::int64_t blocks_per_head = (q_len + block_rows - 1) / block_rows;
  // One task per (head, query block); the GEMMs inside run single-threaded (oneDNN does not nest
  // parallel regions), which beats threading each small GEMM.
  parallel_for(heads * blocks_per_head, 1, [&](std::int64_t task_begin, std::int64_t task_end) {
    std::vector<float> scores(static_cast<std::size_t>(std::min(block_rows, q_len) * kv_len));
    std::vector<float> inverse_sums(static_cast<std::size_t>(block_rows));
    for (std::int64_t task = task_begin; task < task_end; ++task) {
      const std::int64_t head = task / blocks_per_head;
      const std::int64_t row0 = (task % blocks_per_head) * block_rows;
      const std::int64_t rows = std::min(block_rows, q_len - row0);
      const float* q_block = in[0]->fdata() + (head * q_len + row0) * dim;
      const float* k_head = in[1]->fdata() + head * kv_len * dim;
      const float* v_head = in[2]->fdata() + head * kv_len * v_dim;
      gemm(true, rows, kv_len, dim, scale, q_block, dim, k_head, dim, 0.0f, scores.data(), kv_len);
      // Unnormalised softmax: exp(s - max) here, the division by the row sum after P.V, on
      // v_dim values per row instead of kv_len.
      for (std::int64_t r = 0; r < rows; ++r) {
        float* row = scores.data() + r * kv_len;
        const std::int64_t visible = attention_visible_keys(causal, row0 + r, q_len, kv_len);
        inverse_sums[r] = 1.0f / exp_shifted_sum(row, row, visible, max_of(row, visible));
        std::fill(row + visible, row + kv_len, 0.0f);
      }
      float* out_block = out.fdata() + (head * q_len + row0) * v_dim;
      gemm(false, rows, v_dim, kv_len, 1.0f, scores.data(), kv_len, v_head, v_dim, 0.0f, out_block, v_dim);
      for (std::int64_t r = 0; r < rows; ++r) scale_in_place(out_block + r * v_dim, v_dim, inverse_sums[r]);
    }
  });
}

}  // namespace

void add_attention_kernels(CpuKernelTable& table) { table.emplace_back("attention", attention_kernel); }

}  // namespace websd::cpu
