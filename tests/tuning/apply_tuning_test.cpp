// Applying tuning records: workload keys, node annotation by the CPU executor (counts, unchanged
// results), invalid parameters named with their file:line, and the kernel's own range check.
#include "tuning/apply_tuning.h"

#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "targets/cpu/reference/cpu_executor.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "support/tensor_compare.h"
#include "tuning/cpu_device.h"
#include "tuning/workload.h"

namespace websd::tuning {
namespace {


// Two attention nodes of different workloads (self and causal) and one more of the first workload.
graph::Function attention_graph() {
  graph::Function function("attn");
  graph::FunctionBuilder b(function);
  const auto q = b.input("q", {DType::kF32, {1, 2, 300, 8}});
  const auto kv = b.input("kv", {DType::kF32, {1, 2, 300, 8}});
  const auto first = b.op("attention", {q, kv, kv}, {{"scale", 0.35}});
  const auto second = b.op("attention", {first, kv, kv}, {{"scale", 0.5}});
  const auto causal = b.op("attention", {second, kv, kv}, {{"scale", 0.35}, {"causal", std::int64_t{1}}});
  function.set_outputs({causal});
  return function;
}

const std::string kSelfKey = "attention:q=f32[1,2,300,8];k=f32[1,2,300,8];v=f32[1,2,300,8];causal=0";

TuningRecord record_for(const std::string& workload, std::int64_t block_rows, const std::string& device) {
  TuningRecord record;
  record.workload = workload;
  record.target = "cpu";
  record.device = device;
  record.params = {{kBlockRowsParam, block_rows}};
  record.origin = "test.jsonl:4";
  return record;
}

cpu::CpuTensor random_input(const Shape& shape, std::uint32_t seed) {
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate({DType::kF32, shape});
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& value : *tensor.f32) value = normal(engine);
  return tensor;
}

std::vector<float> run(const cpu::CpuExecutor& executor) {
  const auto outputs = executor.run({random_input({1, 2, 300, 8}, 1), random_input({1, 2, 300, 8}, 2)});
  return *outputs.at(0).f32;
}

TEST(Workload, AttentionKeyHoldsShapesDtypeAndCausalButNotScale) {
  const graph::Function function = attention_graph();
  const auto first = attention_workload(function, function.nodes()[0]);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->key(), kSelfKey);
  EXPECT_EQ(first->query_length(), 300);
  EXPECT_EQ(attention_workload(function, function.nodes()[1])->key(), kSelfKey);  // other scale, same work
  const auto workloads = distinct_attention_workloads({&function});
  ASSERT_EQ(workloads.size(), 2u);
  EXPECT_EQ(workloads[1].key(), "attention:q=f32[1,2,300,8];k=f32[1,2,300,8];v=f32[1,2,300,8];causal=1");
}

TEST(ApplyTuning, AnnotatesMatchingNodesOnly) {
  const graph::Function function = attention_graph();
  TuningDb db;
  db.add(record_for(kSelfKey, 32, "dev"));
  const TunedFunction tuned = apply_tuning(function, &db, "cpu", "dev");
  EXPECT_EQ(tuned.tuned_count, 2u);
  EXPECT_EQ(tuned.tunable_count, 3u);
  EXPECT_EQ(tuned.function.nodes()[0].attrs.get_int(kBlockRowsParam, "attention"), 32);
  EXPECT_EQ(tuned.function.nodes()[1].attrs.get_int(kBlockRowsParam, "attention"), 32);
  EXPECT_FALSE(tuned.function.nodes()[2].attrs.has(kBlockRowsParam));
  EXPECT_EQ(apply_tuning(function, &db, "cpu", "another device").tuned_count, 0u);
  EXPECT_EQ(apply_tuning(function, &db, "webgpu", "dev").tuned_count, 0u);
  const TunedFunction untouched = apply_tuning(function, nullptr, "cpu", "dev");
  EXPECT_EQ(untouched.tuned_count, 0u);
  EXPECT_EQ(untouched.tunable_count, 3u);
}

TEST(ApplyTuning, InvalidParametersNameTheRecordsLine) {
  const graph::Function function = attention_graph();
  for (const auto& [params, expected] :
       std::vector<std::pair<TuningParams, std::string>>{{{{"block_rows", 0}}, "'block_rows' = 0 must be in 1..4096"},
                                                         {{{"block_rows", 5000}}, "must be in 1..4096"},
                                                         {{{"tile", 8}}, "parameter 'tile' is not tunable"}}) {
    TuningDb db;
    TuningRecord record = record_for(kSelfKey, 1, "dev");
    record.params = params;
    db.add(record);
    try {
      apply_tuning(function, &db, "cpu", "dev");
      ADD_FAILURE() << "accepted " << expected;
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind("[tuning] test.jsonl:4: ", 0), 0u) << message;
      EXPECT_NE(message.find(expected), std::string::npos) << message;
    }
  }
}

TEST(CpuExecutorTuning, CountsTunableKernelsAndResultsDoNotChange) {
  const graph::Function function = attention_graph();
  TuningDb db;
  for (const auto& workload : distinct_attention_workloads({&function})) {
    db.add(record_for(workload.key(), 32, cpu_device_name()));
  }
  db.add(record_for(kSelfKey, 7, "some other machine"));  // not this CPU: ignored
  cpu::CpuExecutor untuned(function);
  cpu::CpuExecutor tuned(function, true, &db);
  EXPECT_EQ(untuned.tunable_count(), 3u);
  EXPECT_EQ(untuned.tuned_count(), 0u);
  EXPECT_EQ(tuned.tunable_count(), 3u);
  EXPECT_EQ(tuned.tuned_count(), 3u);
  for (const auto& node : tuned.function().nodes()) {
    if (node.op->name == "attention") {
      EXPECT_EQ(node.attrs.get_int(kBlockRowsParam, "attention"), 32);
    }
  }
  untuned.bind_weights({});  // the graph has no weights
  tuned.bind_weights({});
  const std::vector<float> expected = run(untuned), actual = run(tuned);
  EXPECT_LT(test::max_abs_difference(actual, expected), 1e-6);
}

TEST(CpuAttentionKernel, RejectsBlockRowsOutsideItsRange) {
  const cpu::CpuKernel* kernel = cpu::cpu_kernel_lookup("attention");
  ASSERT_NE(kernel, nullptr);
  const cpu::CpuTensor q = random_input({1, 1, 4, 2}, 3);
  cpu::CpuTensor out = cpu::CpuTensor::allocate({DType::kF32, {1, 1, 4, 2}});
  for (const std::int64_t rows : {std::int64_t{0}, std::int64_t{4097}}) {
    try {
      (*kernel)({&q, &q, &q}, {{"scale", 1.0}, {"block_rows", rows}}, out);
      ADD_FAILURE() << "accepted block_rows " << rows;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("block_rows = " + std::to_string(rows) + " is outside 1..4096"),
                std::string::npos)
          << error.what();
    }
  }
}

}  // namespace
}  // namespace websd::tuning
