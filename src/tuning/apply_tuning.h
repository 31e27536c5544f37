// Applies a tuning database to a graph function: every tunable node (workload.h) whose workload
// has a record for the target and device gets the record's parameters as node attributes; nodes
// without a record keep no attribute, so their kernel uses its default. A missing record is never
// an error. Used by the CPU executor at construction (and meant for `websd build --tuning-db`).
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "graph/function.h"
#include "tuning/tuning_db.h"

namespace websd::tuning {

struct TunedFunction {
  graph::Function function;
  std::size_t tuned_count = 0;    // tunable nodes that got a record's parameters
  std::size_t tunable_count = 0;  // tunable nodes in the function
};

// `db` may be nullptr (nothing is applied; the nodes are still counted). Throws websd::Error
// naming the record's file:line when a record's parameters are invalid for its op.
TunedFunction apply_tuning(const graph::Function& function, const TuningDb* db, const std::string& target,
                           const std::string& device);

// "tuning: 3 of 5 tunable kernels have records in tuning.jsonl", as the CLI reports it.
std::string tuning_summary(std::size_t tuned_count, std::size_t tunable_count, const std::string& db_path);

}  // namespace websd::tuning
