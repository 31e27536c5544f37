// runtime::Executor (runtime/executor.h) on the CPU device (cpu/cpu_device.h), running a small
// lowered function: the same outputs as the graph executor, outputs that outlive the next run,
// weights shared between executors through a DeviceWeightCache,
// inputs from and outputs to device buffers,
// several arenas when the target's buffers are small, stable input/output slots, its errors for
// wrong inputs, unbound weights, missing kernels, edited operand types, weights in another kernel's
// layout and dtypes the device does not store; and what lower_to_launch_list (passes/launch_lowering.h) makes of
// reshapes (views, no launch), of its kernel table and of a wrong weight count.
#include "runtime/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "graph/op_registry.h"
#include "passes/launch_lowering.h"
#include "passes/memory_plan.h"
#include "support/deferred_device.h"
#include "support/error_text.h"
#include "support/forwarding_device.h"
#include "support/launch_test_function.h"
#include "targets/cpu/reference/cpu_executor.h"
#include "targets/cpu/runtime/cpu_device.h"

namespace websd::runtime {
namespace {

using websd::test::error_of;

LaunchList lower(const graph::Function& function, const passes::MemoryLimits& limits = {}) {
  return passes::lower_to_launch_list(function, passes::plan_memory(function, limits), {{"w", "", {DType::kF32, {3}}}});
}

// The test weight, held by the source for as long as the executor may adopt it.
class TestWeights final : public WeightSource {
 public:
  WeightBytes read(const LaunchWeight& weight) override {
    EXPECT_EQ(weight.name, "w");
    reads += 1;
    return {std::as_bytes(std::span<const float>(*values_)), DType::kF32, values_};
  }
  int reads = 0;

 private:
  std::shared_ptr<std::vector<float>> values_ = std::make_shared<std::vector<float>>(websd::test::launch_test_weight());
};

const Shape kInputShape{2, 3};
const std::vector<float> kInputA = {0.0f, 1.0f, -2.0f, 3.5f, 4.0f, -0.25f};
const std::vector<float> kInputB = {-1.0f, 0.5f, 2.0f, -3.0f, 0.75f, 6.0f};

std::vector<HostTensor> run(Executor& executor, const std::vector<float>& input) {
  executor.set_input(0, HostTensor(kInputShape, input));
  executor.submit();
  std::vector<HostTensor> outputs;
  for (std::size_t i = 0; i < executor.launch_list().outputs.size(); ++i) outputs.push_back(executor.read_output(i));
  return outputs;
}

std::vector<HostTensor> graph_executor_outputs(const graph::Function& function, const std::vector<float>& input) {
  cpu::CpuExecutor executor(function);
  executor.bind_weights([](const std::string& name, const TensorType&, const cpu::WeightPacking*) {
    EXPECT_EQ(name, "w");
    return std::make_shared<std::vector<float>>(websd::test::launch_test_weight());
  });
  std::vector<HostTensor> outputs;
  for (const auto& tensor : executor.run({cpu::CpuTensor::from_host(HostTensor(kInputShape, input))})) {
    outputs.push_back(tensor.to_host());
  }
  return outputs;
}

void expect_matches_graph_executor(const std::vector<HostTensor>& outputs, const graph::Function& function,
                                   const std::vector<float>& input) {
  const auto expected = graph_executor_outputs(function, input);
  ASSERT_EQ(outputs.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_EQ(outputs[i].shape, expected[i].shape);
    ASSERT_EQ(outputs[i].data.size(), expected[i].data.size());
    for (std::size_t k = 0; k < expected[i].data.size(); ++k) EXPECT_FLOAT_EQ(outputs[i].data[k], expected[i].data[k]);
  }
}

TEST(LaunchLowering, ReshapesBecomeViewsWithoutALaunch) {
  const auto f = websd::test::launch_test_function();
  const runtime::LaunchList list = lower(f.function);
  std::size_t reshapes = 0;
  for (const auto& node : f.function.nodes()) reshapes += node.op->name == "reshape" ? 1 : 0;
  ASSERT_EQ(reshapes, 2u);
  EXPECT_EQ(list.launches.size(), f.function.nodes().size() - reshapes);
  for (const auto& launch : list.launches) {
    EXPECT_NE(list.kernel_of(launch).entry, "reshape");
    EXPECT_NE(launch.writes(), (std::vector<std::int32_t>{f.view}));
    EXPECT_NE(launch.writes(), (std::vector<std::int32_t>{f.input_view}));
  }
  // A view of an intermediate shares its buffer's offset; a view of the input stays the input.
  const runtime::LaunchValue& view = list.values[f.view];
  EXPECT_EQ(view.placement, runtime::Placement::kArena);
  EXPECT_EQ(view.view_of, f.product);
  EXPECT_EQ(view.offset, list.values[f.product].offset);
  EXPECT_EQ(view.type.shape, (Shape{3, 2}));
  EXPECT_EQ(list.values[f.product].view_of, -1);
  EXPECT_EQ(list.values[f.input_view].placement, runtime::Placement::kInput);
  EXPECT_EQ(list.values[f.input_view].index, 0);
  EXPECT_EQ(list.values[f.input_view].view_of, -1);
  EXPECT_EQ(list.values[f.w].placement, runtime::Placement::kWeight);
  EXPECT_EQ(list.values[f.w].index, 0);
  EXPECT_EQ(list.input_names, (std::vector<std::string>{"x"}));
  EXPECT_EQ(list.outputs, (std::vector<std::int32_t>{f.result, f.view}));
}

TEST(LaunchLowering, AWrongWeightCountIsAnError) {
  const auto f = websd::test::launch_test_function();
  const std::string message =
      error_of([&] { passes::lower_to_launch_list(f.function, passes::plan_memory(f.function), {}); });
  EXPECT_NE(message.find("small: 0 weight placements for 1 weights"), std::string::npos) << message;
}

TEST(LaunchLowering, BuiltinKernelsAreTabledOncePerBindingLayout) {
  const auto f = websd::test::launch_test_function();
  const LaunchList list = lower(f.function);
  std::vector<std::string> names;
  for (const Kernel& kernel : list.kernels) {
    names.push_back(kernel.name);
    EXPECT_EQ(kernel.source, "builtin");
    EXPECT_EQ(kernel.bindings.back(), Access::kWrite);
  }
  // mul appears twice (x*w, s*0.5) with the same layout: one entry.
  EXPECT_EQ(std::count(names.begin(), names.end(), "mul/3"), 1);
  EXPECT_EQ(list.memory.alignment, 64);
  EXPECT_EQ(list.memory.arenas.size(), 1u);
}

// The tests that run a function, on the CPU device and on one that defers every operation until
// it is waited for or polled (support/deferred_device.h): "valid once the device has finished"
// holds on both, with identical results.
class ExecutorOnEveryDevice : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Device> make_device() const {
    if (GetParam() == "deferred") return std::make_unique<websd::test::DeferredDevice>();
    return std::make_unique<cpu::CpuDevice>();
  }
};

INSTANTIATE_TEST_SUITE_P(Devices, ExecutorOnEveryDevice, ::testing::Values("cpu", "deferred"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST_P(ExecutorOnEveryDevice, MatchesTheGraphExecutor) {
  const auto f = websd::test::launch_test_function();
  const std::unique_ptr<Device> owned = make_device();
  Device& device = *owned;
  Executor executor(device, lower(f.function));
  TestWeights weights;
  executor.bind_weights(weights);
  const auto outputs = run(executor, kInputA);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[1].shape, (Shape{3, 2}));
  expect_matches_graph_executor(outputs, f.function, kInputA);
  // One value by hand: x[1][2] * w[2] = -0.25 * 2 is view[2][1]; silu(-0.5) * 0.5 + x[1][2].
  const float v = -0.25f * 2.0f;
  EXPECT_FLOAT_EQ(outputs[1].data[5], v);
  EXPECT_NEAR(outputs[0].data[5], v / (1 + std::exp(-v)) * 0.5f - 0.25f, 1e-6);
}

// A target whose buffers hold one value each (WebGPU binds 128 MiB at most): the plan spreads the
// intermediates over several arenas and the results do not change.
TEST_P(ExecutorOnEveryDevice, SeveralArenasGiveTheSameResults) {
  const auto f = websd::test::launch_test_function();
  const LaunchList list = lower(f.function, {64, 64});
  EXPECT_GT(list.memory.arenas.size(), 1u);
  for (const std::int64_t bytes : list.memory.arenas) EXPECT_LE(bytes, 64);
  const std::unique_ptr<Device> owned = make_device();
  Device& device = *owned;
  Executor executor(device, list);
  TestWeights weights;
  executor.bind_weights(weights);
  expect_matches_graph_executor(run(executor, kInputA), f.function, kInputA);
  // A value larger than the largest buffer cannot be planned at all.
  const std::string error = error_of([&] { passes::plan_memory(f.function, {64, 16}); });
  EXPECT_NE(error.find("more than the target's largest buffer of 16 bytes"), std::string::npos) << error;
}

TEST_P(ExecutorOnEveryDevice, SlotsStayWhereTheyAreAndOutputsOutliveTheNextRun) {
  const auto f = websd::test::launch_test_function();
  const std::unique_ptr<Device> owned = make_device();
  Device& device = *owned;
  Executor executor(device, lower(f.function));
  TestWeights weights;
  executor.bind_weights(weights);
  const BufferRange input = executor.input_slot(0), output = executor.output_slot(0);
  const auto first = run(executor, kInputA);
  const auto second = run(executor, kInputB);
  EXPECT_EQ(executor.input_slot(0).buffer, input.buffer);
  EXPECT_EQ(executor.output_slot(0).buffer, output.buffer);
  EXPECT_EQ(input.bytes, 6 * sizeof(float));
  EXPECT_NE(first[0].data, second[0].data);
  expect_matches_graph_executor(first, f.function, kInputA);
  expect_matches_graph_executor(second, f.function, kInputB);
  EXPECT_EQ(weights.reads, 1);  // bound once, adopted in place
}

BufferPtr device_buffer(Device& device, const std::vector<float>& values) {
  const auto bytes = std::as_bytes(std::span<const float>(values));
  BufferPtr buffer = device.allocate(bytes.size());
  device.upload({buffer.get(), 0, bytes.size()}, bytes);
  return buffer;
}

std::vector<float> downloaded(Device& device, const BufferPtr& buffer) {
  std::vector<float> values(buffer->bytes() / sizeof(float));
  device.download({buffer.get(), 0, buffer->bytes()}, std::as_writable_bytes(std::span<float>(values)));
  device.wait();
  return values;
}

// Device tensors: inputs copied from device buffers, outputs copied out to buffers that later runs
// leave alone, and no second copy from a buffer a slot holds already (its bytes are immutable by
// contract; this test breaks the contract on purpose to see the copy skipped).
TEST_P(ExecutorOnEveryDevice, DeviceBuffersFeedInputsAndCopiedOutputsOutliveTheNextRun) {
  const auto f = websd::test::launch_test_function();
  const std::unique_ptr<Device> owned = make_device();
  Device& device = *owned;
  Executor executor(device, lower(f.function));
  TestWeights weights;
  executor.bind_weights(weights);
  const std::vector<float> expected_a = run(executor, kInputA)[0].data, expected_b = run(executor, kInputB)[0].data;

  BufferCache outputs(device);
  const BufferPtr a = device_buffer(device, kInputA), b = device_buffer(device, kInputB);
  executor.set_input(0, a);
  executor.submit();
  const BufferPtr out_a = executor.copy_output(0, outputs);
  executor.set_input(0, b);
  executor.submit();
  const BufferPtr out_b = executor.copy_output(0, outputs);
  EXPECT_EQ(downloaded(device, out_a), expected_a);
  EXPECT_EQ(downloaded(device, out_b), expected_b);

  device.upload({b.get(), 0, b->bytes()}, std::as_bytes(std::span<const float>(kInputA)));
  executor.set_input(0, b);  // the slot holds b's bytes already: not copied again
  executor.submit();
  EXPECT_EQ(downloaded(device, executor.copy_output(0, outputs)), expected_b);
  executor.set_input(0, HostTensor(kInputShape, kInputB));  // a host upload replaces the slot's bytes
  executor.set_input(0, b);                                 // so b is copied again
  executor.submit();
  EXPECT_EQ(downloaded(device, executor.copy_output(0, outputs)), expected_a);

  const std::string size = error_of([&] { executor.set_input(0, device.allocate(8)); });
  EXPECT_NE(size.find("input 'x' f32[2,3] takes 24 bytes, the device buffer given holds 8"), std::string::npos) << size;
  const std::string output = error_of([&] { executor.copy_output(2, outputs); });
  EXPECT_NE(output.find("small: has 2 outputs, not 3"), std::string::npos) << output;
}

TEST_P(ExecutorOnEveryDevice, RunsAgainAfterTheArenaIsReleased) {
  const auto f = websd::test::launch_test_function();
  const std::unique_ptr<Device> owned = make_device();
  Device& device = *owned;
  Executor executor(device, lower(f.function));
  EXPECT_GT(executor.arena_bytes(), 0);
  TestWeights weights;
  executor.bind_weights(weights);
  const auto before = run(executor, kInputA);
  executor.release_arena();
  expect_matches_graph_executor(run(executor, kInputB), f.function, kInputB);
  executor.release_arena();
  executor.release_arena();  // twice is harmless
  const auto again = run(executor, kInputA);
  EXPECT_EQ(again[0].data, before[0].data);
  EXPECT_EQ(again[1].data, before[1].data);
}

// Executors of one device that bind the same weight through a DeviceWeightCache share one import:
// the second reads nothing from the source and runs on the same buffer with the same results;
// once every executor holding it is gone the buffer is freed and the next bind imports it again.
TEST_P(ExecutorOnEveryDevice, ExecutorsShareWeightsImportedThroughACache) {
  const auto f = websd::test::launch_test_function();
  const std::unique_ptr<Device> owned = make_device();
  DeviceWeightCache shared;
  TestWeights weights;
  {
    Executor first(*owned, lower(f.function));
    Executor second(*owned, lower(f.function));
    first.bind_weights(weights, &shared);
    second.bind_weights(weights, &shared);
    EXPECT_EQ(weights.reads, 1);
    EXPECT_EQ(shared.live_count(), 1u);
    expect_matches_graph_executor(run(second, kInputA), f.function, kInputA);
    EXPECT_EQ(run(first, kInputB)[0].data, graph_executor_outputs(f.function, kInputB)[0].data);
  }
  EXPECT_EQ(shared.live_count(), 0u);
  Executor again(*owned, lower(f.function));
  again.bind_weights(weights, &shared);
  EXPECT_EQ(weights.reads, 2);
  expect_matches_graph_executor(run(again, kInputA), f.function, kInputA);
}

// A profiled executor whose output is copied out and downloaded through the device (as the UNet's
// step is) is never waited on: its launch times still reach the profile, at its next submit or
// when it is polled.
TEST_P(ExecutorOnEveryDevice, TimesOfSubmitsNobodyWaitedOnReachTheProfile) {
  const auto f = websd::test::launch_test_function();
  const std::unique_ptr<Device> owned = make_device();
  Executor executor(*owned, lower(f.function));
  TestWeights weights;
  executor.bind_weights(weights);
  OpProfile profile;
  executor.set_profile(&profile);
  BufferCache outputs(*owned);
  const auto calls = [&] {
    std::int64_t total = 0;
    for (const auto& [key, totals] : profile.by_op) total += totals.calls;
    return total;
  };
  const auto launches = static_cast<std::int64_t>(executor.launch_list().launches.size());
  executor.set_input(0, HostTensor(kInputShape, kInputA));
  executor.submit();
  const BufferPtr first = executor.copy_output(0, outputs);
  owned->wait();
  executor.submit();  // takes the first submit's times
  EXPECT_EQ(calls(), launches);
  const BufferPtr second = executor.copy_output(0, outputs);
  owned->wait();
  EXPECT_TRUE(executor.poll());
  EXPECT_EQ(calls(), 2 * launches);
}

// A download is filled once the device has finished: on the deferring device a read before that
// still holds what the caller put there, poll() runs the queued work one operation at a time, and
// the values arrive with the last one. Until then the executor holds the tensor too, so a caller
// that stops waiting (a cancelled run drops its download) leaves nothing to write into freed memory.
TEST(Executor, ADownloadReadBeforeTheDeviceFinishedIsNotFilledYet) {
  const auto f = websd::test::launch_test_function();
  websd::test::DeferredDevice device;
  Executor executor(device, lower(f.function));
  TestWeights weights;
  executor.bind_weights(weights);
  executor.set_input(0, HostTensor(kInputShape, kInputA));
  executor.submit();
  const auto out = std::make_shared<HostTensor>();
  executor.download_output(0, out);
  std::fill(out->data.begin(), out->data.end(), -7.0f);  // what the caller sees until the device ran
  EXPECT_EQ(device.pending(), 5u);                       // the upload, the submit, two output copies and the download
  EXPECT_FALSE(executor.poll());
  EXPECT_EQ(out->data, std::vector<float>(6, -7.0f)) << "filled before the device finished";
  EXPECT_EQ(out.use_count(), 2) << "the executor holds the tensor while the device may write it";
  int polls = 1;
  while (!executor.poll()) polls += 1;
  EXPECT_GT(polls, 1);
  EXPECT_EQ(out.use_count(), 1) << "released once written";
  executor.wait();  // returns at once now
  expect_matches_graph_executor({*out, executor.read_output(1)}, f.function, kInputA);
}

// A device that stores i32 and f16 values besides the CPU's (as WebGPU does: WGSL has no i64):
// token ids are narrowed and float32 inputs converted when they are set, and a 16-bit output is
// widened when it is read. The list has no launch: its output is its float input, so the edges
// alone are tested.
TEST(Executor, ConvertsIdsAndSixteenBitFloatsAtTheEdges) {
  class NarrowDevice final : public websd::test::ForwardingDevice {
   public:
    NarrowDevice() : limits_(ForwardingDevice::limits()) {
      limits_.value_dtypes.push_back(DType::kI32);
      limits_.value_dtypes.push_back(DType::kF16);
    }
    const DeviceLimits& limits() const override { return limits_; }

   private:
    DeviceLimits limits_;
  } device;
  LaunchList list;
  list.symbol = "edges";
  list.values = {{{DType::kI32, {2, 3}}, Placement::kInput, 0}, {{DType::kF16, {2, 3}}, Placement::kInput, 1}};
  list.input_names = {"ids", "x"};
  list.inputs = {0, 1};
  list.outputs = {1};
  Executor executor(device, list);
  const std::vector<std::int64_t> ids = {0, 1, 49406, 49407, -5, 7};
  executor.set_input(0, ids, {2, 3});
  executor.set_input(1, HostTensor({2, 3}, {0.5f, -2.0f, 1.0f / 3.0f, 65504.0f, 1e-8f, 3.0f}));
  std::vector<std::int32_t> stored(6);
  device.download(executor.input_slot(0), std::as_writable_bytes(std::span<std::int32_t>(stored)));
  device.wait();
  EXPECT_EQ(stored, (std::vector<std::int32_t>{0, 1, 49406, 49407, -5, 7}));
  executor.submit();
  const HostTensor out = executor.read_output(0);
  EXPECT_EQ(out.shape, (Shape{2, 3}));
  EXPECT_EQ(out.data, (std::vector<float>{0.5f, -2.0f, f16_to_f32(f32_to_f16(1.0f / 3.0f)), 65504.0f, 0.0f, 3.0f}));
  const std::vector<std::int64_t> wide = {0, 1, 2, 3, std::int64_t{1} << 40, 5};
  const std::string range = error_of([&] { executor.set_input(0, wide, {2, 3}); });
  EXPECT_NE(range.find("id 1099511627776 at 4 does not fit in i32"), std::string::npos) << range;
  const std::string kind = error_of([&] { executor.set_input(0, HostTensor({2, 3}, std::vector<float>(6))); });
  EXPECT_NE(kind.find("edges: input 'ids' must be i32[2,3], got f32[2,3]"), std::string::npos) << kind;
}

TEST(Executor, WrongInputsAreErrors) {
  const auto f = websd::test::launch_test_function();
  cpu::CpuDevice device;
  Executor executor(device, lower(f.function));
  TestWeights weights;
  executor.bind_weights(weights);
  const std::string index = error_of([&] { executor.set_input(1, HostTensor(kInputShape, kInputA)); });
  EXPECT_NE(index.find("[runtime] small: has 1 inputs, not 2"), std::string::npos) << index;
  const std::string shape = error_of([&] { executor.set_input(0, HostTensor({3, 2}, kInputA)); });
  EXPECT_NE(shape.find("[runtime] small: input 'x' must be f32[2,3], got f32[3,2]"), std::string::npos) << shape;
  const std::vector<std::int64_t> ids(6, 1);
  const std::string dtype = error_of([&] { executor.set_input(0, ids, {2, 3}); });
  EXPECT_NE(dtype.find("input 'x' must be f32[2,3], got i64[2,3]"), std::string::npos) << dtype;
  // The executor still runs after refusing.
  expect_matches_graph_executor(run(executor, kInputA), f.function, kInputA);
}

TEST(Executor, RunningWithoutWeightsIsAnError) {
  const auto f = websd::test::launch_test_function();
  cpu::CpuDevice device;
  Executor executor(device, lower(f.function));
  executor.set_input(0, HostTensor(kInputShape, kInputA));
  EXPECT_NE(error_of([&] { executor.submit(); }).find("[runtime] small: weights not bound"), std::string::npos);
  TestWeights weights;
  executor.bind_weights(weights);
  EXPECT_EQ(run(executor, kInputA).size(), 2u);
  executor.release_weights();
  EXPECT_NE(error_of([&] { executor.submit(); }).find("weights not bound"), std::string::npos);
}

TEST(Executor, AWeightOfTheWrongSizeIsRefused) {
  const auto f = websd::test::launch_test_function();
  cpu::CpuDevice device;
  Executor executor(device, lower(f.function));
  class Short final : public WeightSource {
   public:
    WeightBytes read(const LaunchWeight&) override {
      return {std::as_bytes(std::span<const float>(values)), DType::kF32, nullptr};
    }
    std::vector<float> values{1.0f, 2.0f};
  } short_weight;
  const std::string error = error_of([&] { executor.bind_weights(short_weight); });
  EXPECT_NE(error.find("small: weight 'w' holds 8 bytes of f32, its launch list wants f32[3]"), std::string::npos)
      << error;
}

TEST(Executor, KernelsTheDeviceLacksFailAtConstruction) {
  const auto f = websd::test::launch_test_function();
  cpu::CpuDevice device;
  LaunchList generated = lower(f.function);
  generated.kernels[generated.launches[1].kernel].source = "file";
  generated.kernels[generated.launches[1].kernel].file = "kernels/cpu_kernels.so";
  const std::string no_library = error_of([&] { Executor executor(device, generated); });
  EXPECT_NE(no_library.find("small: launch 1 of 'silu' needs kernel file 'kernels/cpu_kernels.so' but no artifact"),
            std::string::npos)
      << no_library;
  LaunchList unknown = lower(f.function);
  unknown.kernels[unknown.launches[1].kernel].entry = "warp_drive";
  const std::string no_kernel = error_of([&] { Executor executor(device, unknown); });
  EXPECT_NE(no_kernel.find("launch 1 of 'warp_drive': this runtime's CPU target has no such kernel"), std::string::npos)
      << no_kernel;
}

// An edited list whose operand types no longer fit the op (here silu writing a larger value than
// it reads) would let the kernel run past its input: refused at load by the op's type inference.
TEST(Executor, OperandTypesThatDoNotFitTheOpAreRefusedAtLoad) {
  const auto f = websd::test::launch_test_function();
  cpu::CpuDevice device;
  LaunchList edited = lower(f.function);
  const std::int32_t written = edited.launches[1].writes().at(0);
  edited.values[written].type.shape = {1, 2};
  const std::string error = error_of([&] { Executor executor(device, edited); });
  EXPECT_NE(error.find("small: launch 1 of 'silu': writes 1 values whose types differ"), std::string::npos) << error;
}

// A weight held in a kernel's own layout (a bf16 linear layer's here, half the bytes of its type)
// fed by an edited list to a kernel that reads plain f32 would be read past its end: refused at load,
// for built-in and generated kernels alike.
TEST(Executor, AWeightInAKernelLayoutReadByAnotherKernelIsRefusedAtLoad) {
  const auto f = websd::test::launch_test_function();
  cpu::CpuDevice device;
  LaunchList edited = lower(f.function);
  edited.weights[0].layout = "bf16-row-major";
  const std::string error = error_of([&] { Executor executor(device, edited); });
  EXPECT_NE(error.find("small: launch 0 of 'mul': reads weight 'w', stored in kernel layout 'bf16-row-major', which "
                       "this kernel does not read"),
            std::string::npos)
      << error;
}

// Regression: the reader checks an arena value's extent by its declared dtype, so a value declared
// f16 (or i32) at the arena's end passed it, while the CPU stores floats as f32 and would have
// written twice the declared bytes, past the arena.
TEST(Executor, DtypesTheDeviceDoesNotStoreNativelyAreRefusedAtLoad) {
  const auto f = websd::test::launch_test_function();
  cpu::CpuDevice device;
  for (const DType narrow : {DType::kF16, DType::kI32, DType::kBF16, DType::kU8}) {
    LaunchList edited = lower(f.function);
    auto arena_value = std::find_if(edited.values.begin(), edited.values.end(),
                                    [](const auto& value) { return value.placement == Placement::kArena; });
    ASSERT_NE(arena_value, edited.values.end());
    arena_value->type.dtype = narrow;
    const std::string error = error_of([&] { Executor executor(device, edited); });
    EXPECT_NE(error.find("is " + dtype_lower_name(narrow) + "; this device stores only f32, i64 values"),
              std::string::npos)
        << error;
  }
}

// A GPU-like device's kernel limits, set low: a list whose kernels bind more storage buffers, run
// more threads per workgroup or dispatch more workgroups in a dimension is refused at load, naming
// the kernel or launch and the WebGPU limit (a low-limit device refuses cleanly, never at run time).
TEST(Executor, KernelLimitsOfTheDeviceAreCheckedAtLoad) {
  class SmallGpu final : public websd::test::ForwardingDevice {
   public:
    explicit SmallGpu(DeviceLimits limits) : limits_(std::move(limits)) {}
    const DeviceLimits& limits() const override { return limits_; }

   private:
    DeviceLimits limits_;
  };
  const auto f = websd::test::launch_test_function();
  const LaunchList list = lower(f.function);
  std::size_t most_bindings = 0;
  for (const Kernel& kernel : list.kernels) most_bindings = std::max(most_bindings, kernel.bindings.size());
  const DeviceLimits cpu = cpu::CpuDevice().limits();
  {
    DeviceLimits limits = cpu;
    limits.max_storage_buffers_per_stage = most_bindings - 1;
    SmallGpu device(limits);
    EXPECT_NE(error_of([&] { Executor executor(device, list); }).find("maxStorageBuffersPerShaderStage"),
              std::string::npos);
  }
  {
    LaunchList wide = list;
    wide.kernels[0].workgroup_size = {16, 16, 2};
    DeviceLimits limits = cpu;
    limits.max_invocations_per_workgroup = 256;
    SmallGpu device(limits);
    EXPECT_NE(error_of([&] { Executor executor(device, wide); }).find("512 threads per workgroup"), std::string::npos);
  }
  {
    LaunchList far = list;
    far.launches[0].dispatch = {70000, 1, 1};
    DeviceLimits limits = cpu;
    limits.max_workgroups_per_dimension = 65535;
    SmallGpu device(limits);
    EXPECT_NE(error_of([&] {
                Executor executor(device, far);
              }).find("launch 0 dispatches 70000 workgroups in one dimension; this device allows 65535"),
              std::string::npos);
  }
  {  // Within every limit: loads.
    DeviceLimits limits = cpu;
    limits.max_storage_buffers_per_stage = most_bindings;
    limits.max_invocations_per_workgroup = 256;
    limits.max_workgroups_per_dimension = 65535;
    SmallGpu device(limits);
    EXPECT_NO_THROW(Executor(device, list));
  }
}

}  // namespace
}  // namespace websd::runtime
