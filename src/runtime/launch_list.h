// A compiled function as the runtime runs it (launch list format version 2, src/artifact/FORMAT.md):
// typed values placed in planned arenas, in the caller's inputs or in the artifact's weights; a
// table of the kernels the function uses (a target-built-in kernel, or an entry point in a file
// the artifact carries, with its workgroup size, binding layout and uniform layout); and the
// launches in order, each a kernel with its bindings (value + access), dispatch size, parameters
// and workspace. The compiler lowers a function and its memory plan to this form
// (passes/launch_lowering.h); runtime::Executor runs it on any runtime::Device without knowing the
// graph IR. Value type; immutable sharing is thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "core/tensor_type.h"

namespace websd::runtime {

inline constexpr std::int64_t kLaunchListFormatVersion = 2;

enum class Placement {
  kInput,   // the caller's input `index` (or a view of it)
  kWeight,  // weight `index` of the list (or a view of it)
  kArena,   // `offset` bytes into arena `arena`
};

enum class Access { kRead, kWrite, kReadWrite };
const char* access_name(Access access);

struct LaunchValue {
  TensorType type;
  Placement placement = Placement::kArena;
  std::int64_t index = -1;   // input or weight index; -1 for arena values
  std::int32_t arena = -1;   // arena index for arena values; -1 otherwise
  std::int64_t offset = -1;  // byte offset in that arena; -1 otherwise
  // For an arena value that reshapes another (no launch writes it): the value whose bytes it shares.
  std::int32_t view_of = -1;
};

struct LaunchWeight {
  std::string name;    // the artifact tensor holding it
  std::string layout;  // empty for row-major, else the kernel packing it is stored in
  TensorType type;     // the logical type (packed storage may be larger)
};

// One field of a kernel's uniform block: a scalar at a byte offset.
struct UniformField {
  std::string name;
  std::string type;  // "u32", "i32" or "f32"
  std::int64_t offset = 0;
  bool operator==(const UniformField&) const = default;
};

struct Kernel {
  std::string name;  // unique in the list (a built-in op may appear with several binding layouts)
  // "builtin": the target runtime's own kernel called `entry` (the op's name); "file": entry
  // point `entry` of the code in artifact file `file` (a CPU kernel library, a WGSL or PTX module).
  std::string source = "builtin";
  std::string entry;
  std::string file;
  std::array<std::int64_t, 3> workgroup_size{1, 1, 1};
  std::vector<Access> bindings;  // the access of each binding slot, in launch binding order
  std::vector<UniformField> uniforms;
  std::int64_t uniform_bytes = 0;
};

struct Binding {
  std::int32_t value = -1;
  Access access = Access::kRead;
};

struct Launch {
  std::int32_t kernel = -1;  // index into LaunchList::kernels
  Attrs attrs;               // parameters of kernels that take them by name (the CPU's)
  std::vector<Binding> bindings;
  std::array<std::int64_t, 3> dispatch{1, 1, 1};  // workgroups; 1,1,1 for host kernels
  std::vector<std::byte> uniforms;                // laid out by the kernel's uniform fields
  std::int64_t workspace_bytes = 0;               // scratch the kernel needs besides its bindings

  // The value ids it reads (read and read-write bindings) and writes (write and read-write), in order.
  std::vector<std::int32_t> reads() const;
  std::vector<std::int32_t> writes() const;
};

// Where intermediates live: one or more arenas, each at most `max_buffer_bytes`, every offset and
// size a multiple of `alignment` (both the target's).
struct MemoryLayout {
  std::int64_t alignment = 64;
  std::int64_t max_buffer_bytes = 0;
  std::vector<std::int64_t> arenas;  // bytes of each arena
  std::int64_t peak_bytes = 0;       // the plan's lower bound
  std::int64_t unplanned_bytes = 0;  // every intermediate in its own buffer

  std::int64_t total_bytes() const;
};

struct LaunchList {
  std::string symbol;
  std::vector<LaunchValue> values;
  std::vector<std::string> input_names;  // parallel to `inputs`
  std::vector<std::int32_t> inputs;      // value ids of the function's inputs, in call order
  std::vector<LaunchWeight> weights;
  std::vector<std::int32_t> outputs;  // value ids
  std::vector<Kernel> kernels;
  std::vector<Launch> launches;
  MemoryLayout memory;

  const Kernel& kernel_of(const Launch& launch) const { return kernels[static_cast<std::size_t>(launch.kernel)]; }
};

nlohmann::json launch_list_to_json(const LaunchList& list);
// Reads and checks a list: every id and kernel index in range, placements consistent, arena values
// inside their arena, arenas within the memory layout's limits, each launch's bindings matching its
// kernel's layout, writes only to arena buffers, no value read before a launch writes it.
// Throws websd::Error("artifact", ...) naming the function and the first problem.
LaunchList launch_list_from_json(const nlohmann::json& json);

}  // namespace websd::runtime
