// Per-kernel time accounting: when a profile is attached to an executor (runtime::Executor, or the
// CPU graph executor), every launch is timed and its time, call count and arithmetic (multiply-adds
// x 2 for GEMM-like ops) accumulate under a key (the op, or kernel and operand shapes). Used by
// `websd bench --profile` and `websd profile`. Not thread-safe: one executor run at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/host_tensor.h"

namespace websd::runtime {

struct OpTotals {
  double seconds = 0;
  std::int64_t calls = 0;
  double flops = 0;  // 0 for ops that are not GEMM-like
};

// Floating-point operations of a GEMM-like op (2 per multiply-add) from its operands' shapes and its
// output's element count; 0 for the other ops.
double kernel_flops(const std::string& op, const std::vector<const Shape*>& inputs, std::int64_t output_numel);

struct OpProfile {
  std::map<std::string, OpTotals> by_op;

  void add(const std::string& key, double seconds, double flops);
  double total_seconds() const;
};

}  // namespace websd::runtime
