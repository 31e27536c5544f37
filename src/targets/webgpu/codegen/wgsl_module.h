// The pieces every WGSL kernel of the webgpu target is made of (the contract in
// src/targets/webgpu/kernels/README.md, executable in web/kernels/wgsl_templates.mjs): templates
// with their shared snippets resolved, specialization constants prepended as `const` lines, the
// uniform block packed field by field, and dispatch grids folded under 65535 workgroups.
//
// Every storage binding of a kernel the compiler writes is declared `var<storage, read_write>`:
// one arena buffer holds a launch's inputs and outputs at different offsets, and WebGPU forbids a
// read-only and a writable binding of one buffer in one dispatch (the runtime's layouts say
// "storage" for every binding). Launch lists still say which bindings a launch reads and writes.
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/launch_list.h"

namespace websd::webgpu {

inline constexpr std::int64_t kMaxWorkgroupsPerDimension = 65535;
inline constexpr std::int64_t kElementwiseWorkgroup = 256;

// Template name ("matmul", "common/erf") -> text, embedded at build time (wgsl_template_sources.cpp).
const std::map<std::string, std::string>& wgsl_template_sources();
// Template `family` with each `// requires: NAME` line replaced by common/NAME. Throws
// websd::Error("codegen") for an unknown family or snippet.
std::string wgsl_template(const std::string& family);

// A specialization constant: `const NAME: TYPE = VALUE;` (types "u32", "i32", "f32", "bool").
struct WgslConstant {
  std::string name;
  std::string type;
  double value = 0;
};
std::string wgsl_constant_lines(const std::vector<WgslConstant>& constants);
// A template specialized: its directives (`enable`, `requires`, `diagnostic` lines, which WGSL wants
// before every declaration) first, then `constant_lines`, then the rest of `module` in order (as
// `specialize` in web/kernels/wgsl_templates.mjs).
std::string wgsl_specialize(const std::string& constant_lines, const std::string& module);
// A finite f32 as a WGSL literal that reads back to the same float (bitcast for inf and NaN).
std::string wgsl_float_literal(float value);
// `text` with every `var<storage, read>` made `var<storage, read_write>` (see above).
std::string wgsl_all_bindings_writable(std::string text);
// `text` without the storage bindings named in `names` (optional operands a constant switched off:
// each becomes a one-element private array, never read) and the remaining @binding numbers made
// consecutive from 0, the uniform block last, as the runtime binds them. Bindings are lines of the
// form `@group(0) @binding(N) var<...> NAME: TYPE;`. Throws websd::Error("codegen") for a name the
// text does not bind.
std::string wgsl_drop_bindings(const std::string& text, const std::vector<std::string>& names);

// A uniform block: 4-byte scalars in order ("u32", "i32", "f32"), padded to a multiple of 16 bytes.
struct ParamField {
  std::string name;
  std::string type;
};
std::vector<runtime::UniformField> uniform_fields(const std::vector<ParamField>& fields);
std::int64_t uniform_bytes(const std::vector<ParamField>& fields);
// Throws websd::Error("codegen") for a missing value or one its type cannot hold.
std::vector<std::byte> pack_params(const std::vector<ParamField>& fields, const std::map<std::string, double>& values);

// A 1-D count of workgroups as (x, y, 1) with x, y <= 65535 (the kernel takes wg.x + wg.y * nwg.x).
std::array<std::int64_t, 3> fold_1d(std::int64_t groups);
// `x` column tiles beside `rows` row tiles folded into (y, z).
std::array<std::int64_t, 3> fold_yz(std::int64_t x, std::int64_t rows);
std::int64_t ceil_div(std::int64_t a, std::int64_t b);

// A short stable name for `text` (16 hex digits of FNV-1a 64): kernels with equal text share it.
std::string text_digest(const std::string& text);

}  // namespace websd::webgpu
