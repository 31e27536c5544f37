#include "targets/cpu/tuning/cpu_attention_tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_kernels.h"

namespace websd::tuning {
namespace {

cpu::CpuTensor random_tensor(const TensorType& type, std::uint32_t seed) {
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate(type);
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& value : *tensor.f32) value = normal(engine);
  return tensor;
}

// Median wall time in milliseconds of each attribute set, over `runs` rounds that each time every
// set once (after one warm-up call each), so that a slow moment of the machine hits all of them.
std::vector<double> median_ms(const cpu::CpuKernel& kernel, const std::vector<const cpu::CpuTensor*>& inputs,
                              const std::vector<Attrs>& attr_sets, cpu::CpuTensor& output, int runs) {
  using Clock = std::chrono::steady_clock;
  for (const auto& attrs : attr_sets) kernel(inputs, attrs, output);
  std::vector<std::vector<double>> samples(attr_sets.size());
  for (int run = 0; run < runs; ++run) {
    for (std::size_t set = 0; set < attr_sets.size(); ++set) {
      const auto start = Clock::now();
      kernel(inputs, attr_sets[set], output);
      samples[set].push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  }
  std::vector<double> medians;
  for (auto& times : samples) {
    std::nth_element(times.begin(), times.begin() + runs / 2, times.end());
    medians.push_back(times[runs / 2]);
  }
  return medians;
}

}  // namespace

std::vector<std::int64_t> attention_block_candidates(const std::vector<std::int64_t>& block_rows,
                                                     std::int64_t query_length) {
  std::vector<std::int64_t> sorted = block_rows;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<std::int64_t> candidates;
  for (const auto rows : sorted) {
    candidates.push_back(rows);
    if (rows >= query_length) break;
  }
  return candidates;
}

AttentionTuneResult tune_cpu_attention(const AttentionWorkload& workload, const AttentionTuneOptions& options) {
  if (options.runs < 1) throw Error("tune", "runs must be at least 1, got " + std::to_string(options.runs));
  const auto candidates = attention_block_candidates(options.block_rows, workload.query_length());
  if (candidates.empty()) throw Error("tune", workload.key() + ": no block_rows candidates to time");
  const cpu::CpuKernel* kernel = cpu::cpu_kernel_lookup("attention");
  if (kernel == nullptr) throw Error("tune", "the CPU target has no attention kernel");

  const cpu::CpuTensor q = random_tensor(workload.q, 1), k = random_tensor(workload.k, 2),
                       v = random_tensor(workload.v, 3);
  const std::vector<const cpu::CpuTensor*> inputs{&q, &k, &v};
  cpu::CpuTensor output = cpu::CpuTensor::allocate(
      {workload.q.dtype, {workload.q.shape[0], workload.q.shape[1], workload.q.shape[2], workload.v.shape[3]}});
  // The kernel's default (no attribute) first, then one attribute set per candidate.
  const Attrs base{{"scale", 1.0 / std::sqrt(static_cast<double>(workload.q.shape[3]))},
                   {"causal", std::int64_t{workload.causal ? 1 : 0}}};
  std::vector<Attrs> attr_sets{base};
  for (const auto rows : candidates) attr_sets.push_back(Attrs(base).set(kBlockRowsParam, rows));
  const std::vector<double> times = median_ms(*kernel, inputs, attr_sets, output, options.runs);

  AttentionTuneResult result;
  result.workload = workload;
  result.default_ms = times[0];
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    result.candidates.push_back({{{kBlockRowsParam, candidates[i]}}, times[i + 1]});
    if (i == 0 || times[i + 1] < result.best.median_ms) result.best = result.candidates.back();
  }
  return result;
}

TuningRecord attention_tuning_record(const AttentionTuneResult& result, const std::string& device,
                                     const std::string& websd_version) {
  TuningRecord record;
  record.workload = result.workload.key();
  record.target = "cpu";
  record.device = device;
  record.params = result.best.params;
  record.median_ms = result.best.median_ms;
  record.candidates = result.candidates;
  record.websd_version = websd_version;
  record.created = utc_timestamp_now();
  return record;
}

}  // namespace websd::tuning
