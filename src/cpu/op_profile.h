// Per-op wall-time accounting for the CPU executor: when a profile is attached, every node's kernel
// is timed and its time, call count and arithmetic (multiply-adds x 2 for GEMM-like ops) accumulate
// under the op's name. Used by `websd bench --profile`. Not thread-safe: one executor run at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graph/function.h"

namespace websd::cpu {

struct OpTotals {
  double seconds = 0;
  std::int64_t calls = 0;
  double flops = 0;  // 0 for ops that are not GEMM-like
};

struct OpProfile {
  std::map<std::string, OpTotals> by_op;

  void add(const graph::Function& function, const graph::Node& node, double seconds);
  double total_seconds() const;
};

}  // namespace websd::cpu
