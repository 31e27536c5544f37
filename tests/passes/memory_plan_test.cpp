// Static memory planning: exact arena sizes on small graphs, views sharing buffers, and an
// exhaustive, independent check that no two buffers live at the same time overlap in the arena, on
// random graphs and on the real UNet (tiny fixture model and the sd15 preset at 64x64, batch 2).
#include "passes/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>

#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "models/graphs/sd_graphs.h"
#include "pass_test_support.h"
#include "passes/lower_composites.h"

namespace websd::passes {
namespace {

using graph::Function;
using graph::FunctionBuilder;
using graph::ValueId;

std::int64_t round_up(std::int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Checks `plan` against liveness recomputed here from the function alone: owners follow reshape
// chains, every pair of distinct arena buffers whose lifetimes meet is disjoint in memory, and the
// reported totals are the sums and the peak they must be.
void expect_sound_plan(const Function& function, const MemoryPlan& plan) {
  const auto& values = function.values();
  const auto& nodes = function.nodes();
  ASSERT_EQ(plan.values.size(), values.size());
  std::vector<ValueId> owner(values.size());
  for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
    owner[id] = id;
    const graph::Value& value = values[id];
    if (value.kind == graph::ValueKind::kNode && nodes[value.node].op->name == "reshape") {
      owner[id] = owner[nodes[value.node].inputs[0]];
    }
  }
  const auto end = static_cast<std::int32_t>(nodes.size());
  std::vector<std::int32_t> first(values.size(), -1), last(values.size(), -1);
  for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
    if (owner[id] == id && values[id].kind == graph::ValueKind::kNode) first[id] = last[id] = values[id].node;
  }
  for (std::int32_t n = 0; n < end; ++n) {
    for (const ValueId id : nodes[n].inputs) last[owner[id]] = std::max(last[owner[id]], n);
  }
  for (const ValueId id : function.outputs()) last[owner[id]] = end;

  std::vector<ValueId> buffers;
  std::int64_t unplanned = 0;
  for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
    const ValuePlacement& placement = plan.values[id];
    EXPECT_EQ(placement.buffer, owner[id]) << "%" << id;
    EXPECT_EQ(placement.bytes, values[id].type.numel() * static_cast<std::int64_t>(dtype_size(values[id].type.dtype)));
    const graph::ValueKind root_kind = values[owner[id]].kind;
    if (root_kind != graph::ValueKind::kNode) {
      EXPECT_EQ(placement.storage, root_kind == graph::ValueKind::kInput ? Storage::kInput : Storage::kWeight);
      EXPECT_EQ(placement.offset, -1);
      continue;
    }
    ASSERT_EQ(placement.storage, Storage::kArena) << "%" << id;
    EXPECT_EQ(placement.offset % plan.limits.alignment, 0) << "%" << id;
    EXPECT_EQ(placement.offset, plan.values[owner[id]].offset);
    EXPECT_LE(placement.offset + round_up(placement.bytes), plan.arena_bytes);
    EXPECT_EQ(placement.first_node, first[owner[id]]);
    EXPECT_EQ(placement.last_node, last[owner[id]]);
    if (owner[id] == id) {
      buffers.push_back(id);
      unplanned += round_up(placement.bytes);
    }
  }
  std::int64_t conflicts = 0;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const ValuePlacement& a = plan.values[buffers[i]];
    for (std::size_t j = i + 1; j < buffers.size(); ++j) {
      const ValuePlacement& b = plan.values[buffers[j]];
      const bool together = first[buffers[i]] <= last[buffers[j]] && first[buffers[j]] <= last[buffers[i]];
      const bool disjoint = a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset;
      if (together && !disjoint && ++conflicts <= 5) {
        ADD_FAILURE() << "%" << buffers[i] << " and %" << buffers[j] << " live together and overlap";
      }
    }
  }
  EXPECT_EQ(conflicts, 0);
  std::int64_t peak = 0;
  for (std::int32_t n = 0; n <= end; ++n) {
    std::int64_t live = 0;
    for (const ValueId id : buffers) live += first[id] <= n && n <= last[id] ? round_up(plan.values[id].bytes) : 0;
    peak = std::max(peak, live);
  }
  EXPECT_EQ(plan.unplanned_bytes, unplanned);
  EXPECT_EQ(plan.peak_live_bytes, peak);
  EXPECT_LE(plan.peak_live_bytes, plan.arena_bytes);
  EXPECT_LE(plan.arena_bytes, plan.unplanned_bytes);
}

TEST(MemoryPlan, ChainPingPongsBetweenTwoBuffers) {
  Function function("chain");
  FunctionBuilder b(function);
  ValueId x = b.input("x", {DType::kF32, {1000}});  // 4000 bytes, 4032 aligned
  for (int i = 0; i < 6; ++i) x = b.op("exp", {x});
  function.set_outputs({x});
  const MemoryPlan plan = plan_memory(function);
  expect_sound_plan(function, plan);
  EXPECT_EQ(plan.unplanned_bytes, 6 * 4032);
  EXPECT_EQ(plan.peak_live_bytes, 2 * 4032);
  EXPECT_EQ(plan.arena_bytes, 2 * 4032);
}

TEST(MemoryPlan, ReshapeSharesItsInputsBufferAndExtendsItsLife) {
  Function function("views");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {4, 16}});
  const ValueId input_view = b.reshape(x, {64});
  const ValueId a = b.op("exp", {input_view});          // node 1
  const ValueId a_view = b.reshape(a, {8, 8});          // node 2
  const ValueId c = b.op("tanh", {b.op("sin", {a})});   // nodes 3, 4
  const ValueId d = b.add(c, b.reshape(a_view, {64}));  // nodes 5, 6: a is read last here
  function.set_outputs({d});
  const MemoryPlan plan = plan_memory(function);
  expect_sound_plan(function, plan);
  EXPECT_EQ(plan.values[input_view].storage, Storage::kInput);
  EXPECT_EQ(plan.values[a_view].buffer, a);
  EXPECT_EQ(plan.values[a_view].offset, plan.values[a].offset);
  EXPECT_EQ(plan.values[a].last_node, 6);
  EXPECT_EQ(plan.unplanned_bytes, 4 * 256) << "a, sin, tanh, add; views take no memory";
}

TEST(MemoryPlan, OutputsLiveToTheEndAndSizesFollowTheDtype) {
  Function function("mixed");
  FunctionBuilder b(function);
  const ValueId x = b.input("x", {DType::kF32, {100}});
  const ValueId early = b.op("exp", {x});  // an output: must survive everything after it
  const ValueId half = b.op("cast", {b.op("sin", {x})}, {{"dtype", std::string("F16")}});
  const ValueId later = b.op("cos", {b.op("tanh", {half})});
  function.set_outputs({early, later});
  const MemoryPlan plan = plan_memory(function);
  expect_sound_plan(function, plan);
  EXPECT_EQ(plan.values[half].bytes, 200);
  EXPECT_EQ(plan.values[early].last_node, static_cast<std::int32_t>(function.nodes().size()));
}

// A random DAG of 1-D values of random sizes and dtypes: unary ops, same-shape binary ops, slices,
// concats, casts and reshapes (views), with a few outputs and some dead values.
Function random_graph(std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  Function function("random" + std::to_string(seed));
  FunctionBuilder b(function);
  std::vector<ValueId> pool = {b.input("x", {DType::kF32, {static_cast<std::int64_t>(16 + pick(500))}}),
                               b.weight("w", {static_cast<std::int64_t>(16 + pick(500))})};
  const int count = 20 + static_cast<int>(pick(60));
  for (int i = 0; i < count; ++i) {
    const ValueId a = pool[pick(pool.size())];
    const ValueId other = pool[pick(pool.size())];
    const std::int64_t n = b.shape(a)[0];
    switch (pick(6)) {
      case 0:
        pool.push_back(b.op(pick(2) ? "exp" : "tanh", {a}));
        break;
      case 1:
        pool.push_back(b.type(a) == b.type(other) ? b.add(a, other) : b.op("sin", {a}));
        break;
      case 2:
        pool.push_back(n > 1 ? b.slice(a, 0, 0, 1 + static_cast<std::int64_t>(pick(n - 1))) : b.op("cos", {a}));
        break;
      case 3:
        pool.push_back(b.type(a).dtype == b.type(other).dtype ? b.concat({a, other}, 0) : b.op("neg", {a}));
        break;
      case 4:
        pool.push_back(b.op("cast", {a}, {{"dtype", std::string(pick(2) ? "F16" : "F32")}}));
        break;
      default:
        pool.push_back(b.reshape(a, {n}));
        break;
    }
  }
  std::vector<ValueId> outputs = {pool.back()};
  for (int i = 0; i < 2; ++i) outputs.push_back(pool[2 + pick(pool.size() - 2)]);
  function.set_outputs(outputs);
  return function;
}

TEST(MemoryPlan, RandomGraphsNeverOverlapLiveBuffers) {
  std::int64_t unplanned = 0, arena = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(seed);
    const Function function = random_graph(seed);
    const MemoryPlan plan = plan_memory(function);
    expect_sound_plan(function, plan);
    unplanned += plan.unplanned_bytes;
    arena += plan.arena_bytes;
  }
  EXPECT_LT(arena, unplanned) << "planning must pay off over 300 graphs";
}

void report_unet(const std::string& label, const Function& unet) {
  const MemoryPlan plan = plan_memory(unet);
  expect_sound_plan(unet, plan);
  const auto mib = [](std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); };
  std::cout << "[ memory   ] " << label << " (" << unet.nodes().size() << " nodes): without planning "
            << mib(plan.unplanned_bytes) << " MiB, with planning " << mib(plan.arena_bytes) << " MiB, peak live "
            << mib(plan.peak_live_bytes) << " MiB (arena/peak "
            << static_cast<double>(plan.arena_bytes) / plan.peak_live_bytes << ")\n";
  EXPECT_LT(plan.arena_bytes, plan.unplanned_bytes / 4) << label;
}

TEST(MemoryPlan, TinyUNetPlanIsSound) {
  const Function unet = unet_graph(test::tiny_unet_config(), 2, 16, 16);
  report_unet("tiny UNet 16x16 batch 2", unet);
  report_unet("tiny UNet 16x16 batch 2, lowered", lower_composites(unet, [](const std::string&) { return false; }));
}

TEST(MemoryPlan, Sd15UNetAt64x64Batch2) {
  const Function unet = unet_graph(test::preset_unet_config("sd15"), 2, 64, 64);
  report_unet("sd15 UNet 64x64 batch 2, composites kept", unet);
  report_unet("sd15 UNet 64x64 batch 2, lowered", lower_composites(unet, [](const std::string&) { return false; }));
}

}  // namespace
}  // namespace websd::passes
