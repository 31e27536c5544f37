#include "passes/memory_plan.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "graph/op_registry.h"

namespace websd::passes {
namespace {

using graph::ValueId;

std::int64_t aligned(std::int64_t bytes, std::int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

bool is_view(const graph::Node& node) { return node.op->name == "reshape"; }

struct Buffer {
  ValueId owner;
  std::int64_t size;  // aligned
  std::int32_t first;
  std::int32_t last;
  std::int32_t arena = -1;
  std::int64_t offset = -1;
};

bool overlaps_in_time(const Buffer& a, const Buffer& b) { return a.first <= b.last && b.first <= a.last; }

// Best fit among the gaps left by `placed` buffers that live at the same time as `buffer`.
std::int64_t best_fit_offset(const Buffer& buffer, const std::vector<const Buffer*>& placed) {
  std::vector<const Buffer*> neighbours;
  for (const Buffer* other : placed) {
    if (overlaps_in_time(buffer, *other)) neighbours.push_back(other);
  }
  std::sort(neighbours.begin(), neighbours.end(),
            [](const Buffer* a, const Buffer* b) { return a->offset < b->offset; });
  std::int64_t cursor = 0;  // end of the occupied region scanned so far
  std::int64_t best = -1;
  std::int64_t best_gap = std::numeric_limits<std::int64_t>::max();
  for (const Buffer* other : neighbours) {
    const std::int64_t gap = other->offset - cursor;
    if (gap >= buffer.size && gap < best_gap) {
      best = cursor;
      best_gap = gap;
    }
    cursor = std::max(cursor, other->offset + other->size);
  }
  return best >= 0 ? best : cursor;
}

}  // namespace

MemoryPlan plan_memory(const graph::Function& function, const MemoryLimits& limits) {
  const auto& values = function.values();
  const auto& nodes = function.nodes();
  const auto end_of_function = static_cast<std::int32_t>(nodes.size());
  MemoryPlan plan;
  plan.limits = limits;
  plan.values.resize(values.size());
  for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
    ValuePlacement& placement = plan.values[id];
    placement.buffer = id;
    placement.bytes = values[id].type.numel() * static_cast<std::int64_t>(dtype_size(values[id].type.dtype));
    placement.storage = values[id].kind == graph::ValueKind::kInput    ? Storage::kInput
                        : values[id].kind == graph::ValueKind::kWeight ? Storage::kWeight
                                                                       : Storage::kArena;
    if (values[id].kind == graph::ValueKind::kNode) placement.first_node = placement.last_node = values[id].node;
  }

  // Views take their input's owner (nodes are in order, so the input's owner is already final).
  for (const graph::Node& node : nodes) {
    if (!is_view(node)) continue;
    ValuePlacement& view = plan.values[node.outputs[0]];
    view.buffer = plan.values[node.inputs[0]].buffer;
    view.storage = plan.values[view.buffer].storage;
    if (view.storage != Storage::kArena) view.first_node = view.last_node = -1;
  }
  // Lifetimes accumulate on owners: every read of the owner or of one of its views extends it.
  std::vector<std::int32_t> last(values.size(), -1);
  for (std::int32_t n = 0; n < end_of_function; ++n) {
    for (const ValueId id : nodes[n].inputs) last[plan.values[id].buffer] = n;
  }
  for (const ValueId id : function.outputs()) last[plan.values[id].buffer] = end_of_function;

  std::vector<Buffer> buffers;
  for (ValueId id = 0; id < static_cast<ValueId>(values.size()); ++id) {
    const ValuePlacement& placement = plan.values[id];
    if (placement.storage != Storage::kArena || placement.buffer != id) continue;
    buffers.push_back({id, aligned(placement.bytes, limits.alignment), placement.first_node,
                       std::max(last[id], placement.first_node)});
    if (buffers.back().size > limits.max_buffer_bytes) {
      throw Error("compiler", function.symbol() + ": value '" + values[id].name + "' " + values[id].type.to_string() +
                                  " needs " + std::to_string(buffers.back().size) +
                                  " bytes, more than the target's largest buffer of " +
                                  std::to_string(limits.max_buffer_bytes) + " bytes (choose a smaller image size)");
    }
    plan.unplanned_bytes += buffers.back().size;
  }

  std::vector<Buffer*> order;
  for (Buffer& buffer : buffers) order.push_back(&buffer);
  std::sort(order.begin(), order.end(), [](const Buffer* a, const Buffer* b) {
    if (a->size != b->size) return a->size > b->size;
    if (a->first != b->first) return a->first < b->first;
    return a->owner < b->owner;
  });
  std::vector<std::vector<const Buffer*>> placed;  // per arena
  for (Buffer* buffer : order) {
    for (std::size_t arena = 0; buffer->arena < 0; ++arena) {
      if (arena == placed.size()) {
        placed.emplace_back();
        plan.arenas.push_back(0);
      }
      const std::int64_t offset = best_fit_offset(*buffer, placed[arena]);
      if (offset + buffer->size > limits.max_buffer_bytes) continue;
      buffer->arena = static_cast<std::int32_t>(arena);
      buffer->offset = offset;
      placed[arena].push_back(buffer);
      plan.arenas[arena] = std::max(plan.arenas[arena], offset + buffer->size);
    }
  }
  for (const std::int64_t bytes : plan.arenas) plan.arena_bytes += bytes;

  // Live bytes per node by a difference array over lifetimes.
  std::vector<std::int64_t> delta(nodes.size() + 2, 0);
  for (const Buffer& buffer : buffers) {
    delta[buffer.first] += buffer.size;
    delta[buffer.last + 1] -= buffer.size;
  }
  std::int64_t live = 0;
  for (const std::int64_t change : delta) {
    live += change;
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, live);
  }

  for (const Buffer& buffer : buffers) {
    ValuePlacement& owner = plan.values[buffer.owner];
    owner.arena = buffer.arena;
    owner.offset = buffer.offset;
    owner.first_node = buffer.first;
    owner.last_node = buffer.last;
  }
  for (ValuePlacement& placement : plan.values) {
    if (placement.storage != Storage::kArena) continue;
    const ValuePlacement& owner = plan.values[placement.buffer];
    placement.arena = owner.arena;
    placement.offset = owner.offset;
    placement.first_node = owner.first_node;
    placement.last_node = owner.last_node;
  }
  return plan;
}

}  // namespace websd::passes
