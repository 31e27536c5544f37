// Analysis: static memory plan of a function's intermediates in one or more arenas.
//
// Liveness is taken over the whole function in node order. A buffer lives from the node that
// produces it to the last node that reads it (inclusive, so a node's outputs never share memory
// with its inputs); function outputs live to the end. `reshape` is a view: its result shares its
// input's buffer (transitively), which then lives until the last use of any of its views. A view
// of a function input or weight lives outside the arena, as they do.
//
// Placement is greedy by size with best fit: buffers are taken largest first (ties: earlier
// producer, then lower value id); each is put into the smallest gap, between the buffers already
// placed whose lifetimes overlap its own, that holds it, or above all of them if no gap does.
// Sizes are numel * dtype size rounded up to `kArenaAlignment`, so every offset is aligned too.
//
// Reports the bytes without planning (every intermediate in its own buffer), the arena size, and
// the peak of the live bytes over the nodes, a lower bound of any arena. Pure and thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/function.h"

namespace websd::passes {

// What a target's buffers allow: the alignment of every arena offset and the largest arena.
struct MemoryLimits {
  std::int64_t alignment = 64;  // cache lines, AVX-512 loads
  std::int64_t max_buffer_bytes = std::int64_t{1} << 48;
};

enum class Storage {
  kInput,   // a function input, or a view of one: bound by the caller
  kWeight,  // a weight, or a view of one: bound at load time
  kArena,   // an intermediate (or a view of one) at `offset` in arena `arena`
};

struct ValuePlacement {
  Storage storage = Storage::kArena;
  graph::ValueId buffer = -1;    // the value that owns the memory (itself unless a view)
  std::int32_t arena = -1;       // arena index for kArena, else -1
  std::int64_t offset = -1;      // arena byte offset for kArena, else -1
  std::int64_t bytes = 0;        // numel * dtype size of this value
  std::int32_t first_node = -1;  // lifetime of the owning buffer, for kArena: producing node ...
  std::int32_t last_node = -1;   // ... to last reader (node count for function outputs)
};

struct MemoryPlan {
  std::int64_t unplanned_bytes = 0;  // sum of all intermediate buffers, each aligned
  std::int64_t arena_bytes = 0;      // with planning, all arenas together
  std::vector<std::int64_t> arenas;  // bytes of each arena
  MemoryLimits limits;
  std::int64_t peak_live_bytes = 0;    // most aligned bytes live at one node: the lower bound
  std::vector<ValuePlacement> values;  // indexed by ValueId
};

// Throws websd::Error("compiler") for a value larger than limits.max_buffer_bytes.
MemoryPlan plan_memory(const graph::Function& function, const MemoryLimits& limits = {});

}  // namespace websd::passes
