#include <gtest/gtest.h>

#include "core/error.h"
#include "targets/cpu/reference/cpu_executor.h"
#include "cpu_test_util.h"
#include "graph/function_builder.h"

namespace websd::cpu {
namespace {

TEST(CpuExecutor, BindsWeightsAndRunsElementwiseChains) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2, 3}});
  const auto w = b.weight("w", {3});
  const auto y = b.op("silu", {b.add(b.mul(x, w), b.scalar(1.0))});
  function.set_outputs({b.reshape(y, {3, 2}), y});
  CpuExecutor executor(function);
  executor.bind_weights([](const std::string& name, const TensorType&, const WeightPacking*) {
    EXPECT_EQ(name, "w");
    return std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3});
  });
  CpuTensor input = CpuTensor::allocate({DType::kF32, {2, 3}});
  *input.f32 = {0, 1, 2, 3, 4, 5};
  const auto outputs = executor.run({input});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].type.shape, (Shape{3, 2}));
  const float v = 1 * 2 + 1;  // x=1, w=2
  EXPECT_NEAR((*outputs[1].f32)[1], v / (1 + std::exp(-v)), 1e-6);
}

TEST(CpuExecutor, RejectsWrongInputsAndMissingWeights) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto x = b.input("x", {DType::kF32, {2}});
  function.set_outputs({b.mul(x, b.weight("w", {2}))});
  CpuExecutor executor(function);
  EXPECT_THROW(executor.run({CpuTensor::allocate({DType::kF32, {2}})}), Error);  // weights unbound
  EXPECT_THROW(executor.bind_weights([](const std::string&, const TensorType&, const WeightPacking*) {
    return std::make_shared<std::vector<float>>(3);
  }),
               Error);
  executor.bind_weights([](const std::string&, const TensorType&, const WeightPacking*) {
    return std::make_shared<std::vector<float>>(2);
  });
  EXPECT_THROW(executor.run({CpuTensor::allocate({DType::kF32, {3}})}), Error);
  EXPECT_THROW(executor.run({}), Error);
}

TEST(CpuExecutor, GatherRejectsOutOfRangeIds) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const auto ids = b.input("ids", {DType::kI64, {3}});
  function.set_outputs({b.op("gather_rows", {b.weight("table", {4, 2}), ids})});
  CpuExecutor executor(function);
  executor.bind_weights([](const std::string&, const TensorType&, const WeightPacking*) {
    return std::make_shared<std::vector<float>>(8);
  });
  CpuTensor input = CpuTensor::allocate({DType::kI64, {3}});
  *input.i64 = {0, 3, 4};
  EXPECT_THROW(executor.run({input}), Error);
}

}  // namespace
}  // namespace websd::cpu
