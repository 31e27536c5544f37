// The workload of a tunable graph node: the op plus everything that decides which kernel
// parameters run fastest, written as one canonical string that keys the tuning database.
// Today the only tunable op is `attention` (its query block size, attribute `block_rows`); its
// signature is the q/k/v types (dtype and shape) and `causal`, not `scale`, which does not change
// the work. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/function.h"
#include "core/tensor_type.h"

namespace websd::tuning {

// The attention kernel's tunable attribute: query rows per block (the kernel's default when absent).
inline constexpr const char* kBlockRowsParam = "block_rows";

struct AttentionWorkload {
  TensorType q, k, v;
  bool causal = false;

  // "attention:q=f32[2,8,4096,40];k=f32[2,8,77,40];v=f32[2,8,77,40];causal=0"
  std::string key() const;
  std::int64_t query_length() const { return q.shape.at(2); }
};

// The workload of `node` in `function` when the node is tunable; nullopt otherwise.
std::optional<AttentionWorkload> attention_workload(const graph::Function& function, const graph::Node& node);

// The distinct attention workloads of `functions`, in first-seen order.
std::vector<AttentionWorkload> distinct_attention_workloads(const std::vector<const graph::Function*>& functions);

}  // namespace websd::tuning
