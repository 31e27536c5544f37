// The CPU attention tuner: which block sizes it times and what it records (no timing assertions).
#include "targets/cpu/tuning/cpu_attention_tuner.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"

namespace websd::tuning {
namespace {

TEST(CpuAttentionTuner, CandidatesAreBoundedByTheQueryLength) {
  const std::vector<std::int64_t> blocks{32, 64, 128, 256};
  EXPECT_EQ(attention_block_candidates(blocks, 4096), blocks);
  EXPECT_EQ(attention_block_candidates(blocks, 77), (std::vector<std::int64_t>{32, 64, 128}));
  EXPECT_EQ(attention_block_candidates(blocks, 64), (std::vector<std::int64_t>{32, 64}));
  EXPECT_EQ(attention_block_candidates(blocks, 4), (std::vector<std::int64_t>{32}));
  EXPECT_EQ(attention_block_candidates({256, 32, 32}, 100), (std::vector<std::int64_t>{32, 256}));
}

TEST(CpuAttentionTuner, TimesEveryCandidateAndKeepsTheFastest) {
  const AttentionWorkload workload{
      {DType::kF32, {1, 2, 70, 8}}, {DType::kF32, {1, 2, 77, 8}}, {DType::kF32, {1, 2, 77, 4}}, false};
  AttentionTuneOptions options;
  options.runs = 1;
  const AttentionTuneResult result = tune_cpu_attention(workload, options);
  EXPECT_EQ(result.workload.key(), workload.key());
  ASSERT_EQ(result.candidates.size(), 3u);  // 32, 64, 128
  std::vector<std::int64_t> timed;
  for (const auto& candidate : result.candidates) {
    timed.push_back(candidate.params.at(kBlockRowsParam));
    EXPECT_GE(candidate.median_ms, 0.0);
    EXPECT_GE(candidate.median_ms, result.best.median_ms);
  }
  EXPECT_EQ(timed, (std::vector<std::int64_t>{32, 64, 128}));
  EXPECT_GE(result.default_ms, 0.0);

  const TuningRecord record = attention_tuning_record(result, "dev", "9.9.9");
  EXPECT_EQ(record.workload, workload.key());
  EXPECT_EQ(record.target, "cpu");
  EXPECT_EQ(record.device, "dev");
  EXPECT_EQ(record.params, result.best.params);
  EXPECT_EQ(record.candidates.size(), 3u);
  EXPECT_EQ(record.websd_version, "9.9.9");
  EXPECT_FALSE(record.created.empty());
}

TEST(CpuAttentionTuner, RejectsZeroRuns) {
  const AttentionWorkload workload{
      {DType::kF32, {1, 1, 4, 2}}, {DType::kF32, {1, 1, 4, 2}}, {DType::kF32, {1, 1, 4, 2}}, true};
  AttentionTuneOptions options;
  options.runs = 0;
  EXPECT_THROW(tune_cpu_attention(workload, options), Error);
}

}  // namespace
}  // namespace websd::tuning
