// A compiled function as the runtime runs it: typed values placed in one planned arena, in the
// caller's inputs or in the artifact's weights, and the launches (kernel + operands) in order. The
// compiler lowers a function and its memory plan to this form (src/build/launch_lowering.h) and
// stores it in the artifact's `functions` section; executors (src/cpu/arena_executor.h) run it
// without knowing about the graph IR or its passes. Value type; immutable sharing is thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "core/tensor_type.h"

namespace websd::runtime {

// Every arena offset and size is a multiple of this (cache lines, AVX-512 loads).
inline constexpr std::int64_t kArenaAlignment = 64;

enum class Placement {
  kInput,   // the caller's input `index` (or a view of it)
  kWeight,  // weight `index` of the list (or a view of it)
  kArena,   // `offset` bytes into the arena
};

struct LaunchValue {
  TensorType type;
  Placement placement = Placement::kArena;
  std::int64_t index = -1;   // input or weight index; -1 for arena values
  std::int64_t offset = -1;  // arena byte offset; -1 otherwise
  // For an arena value that reshapes another (no launch writes it): the value whose bytes it shares.
  std::int32_t view_of = -1;
};

struct LaunchWeight {
  std::string name;    // the artifact tensor holding it
  std::string layout;  // empty for row-major, else the kernel packing it is stored in
  TensorType type;  // the logical type (packed storage may be larger)
};

struct Launch {
  std::string op;      // the kernel family (a CPU kernel name, or fused_elementwise)
  std::string kernel;  // the generated kernel's entry point; empty for library kernels
  Attrs attrs;
  std::vector<std::int32_t> inputs;  // value ids
  std::int32_t output = -1;
};

struct LaunchList {
  std::string symbol;
  std::vector<LaunchValue> values;
  std::vector<std::string> input_names;  // parallel to `inputs`
  std::vector<std::int32_t> inputs;      // value ids of the function's inputs, in call order
  std::vector<LaunchWeight> weights;
  std::vector<std::int32_t> outputs;  // value ids
  std::vector<Launch> launches;
  std::int64_t arena_bytes = 0;
  std::int64_t peak_bytes = 0;       // the plan's lower bound
  std::int64_t unplanned_bytes = 0;  // every intermediate in its own buffer
};

nlohmann::json launch_list_to_json(const LaunchList& list);
// Reads and checks a list: every id in range, placements consistent, arena values inside the
// arena, launches only reading values that are inputs, weights or written by an earlier launch.
// Throws websd::Error("artifact", ...) naming the function and the first problem.
LaunchList launch_list_from_json(const nlohmann::json& json);

}  // namespace websd::runtime
