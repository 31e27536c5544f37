// Tunes the CPU attention kernel's query block size (attribute block_rows) for one workload: runs
// the kernel directly on random inputs of the workload's shapes, once per candidate to warm up and
// then in `runs` rounds that time every candidate once, and keeps the candidate with the lowest
// median. The kernel without the attribute (its built-in default) is timed alongside as the baseline.
// Uses all of the machine's threads while timing; call from one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuning/tuning_db.h"
#include "tuning/workload.h"

namespace websd::tuning {

struct AttentionTuneOptions {
  int runs = 5;  // timed runs per candidate, after one warm-up run
  std::vector<std::int64_t> block_rows = {32, 64, 128, 256};
};

struct AttentionTuneResult {
  AttentionWorkload workload;
  std::vector<TuningCandidate> candidates;  // in the order timed
  TuningCandidate best;
  double default_ms = 0;  // median of the kernel without block_rows
};

// The block sizes worth timing for a query length: those below it, plus the smallest one at or
// above it (every larger block runs the same single block per head).
std::vector<std::int64_t> attention_block_candidates(const std::vector<std::int64_t>& block_rows,
                                                     std::int64_t query_length);

// Throws websd::Error for runs < 1 or no candidate.
AttentionTuneResult tune_cpu_attention(const AttentionWorkload& workload, const AttentionTuneOptions& options);

// The database record of `result` for target "cpu", created now.
TuningRecord attention_tuning_record(const AttentionTuneResult& result, const std::string& device,
                                     const std::string& websd_version);

}  // namespace websd::tuning
