// WGSL modules the webgpu target writes itself rather than specializing a template: a `constant`
// node's values, and a fused elementwise program (wgsl_fused_elementwise.h). Each has one entry
// point `main` of 256 threads, one thread per output element over a folded 1-D grid, its storage
// bindings the node's inputs then its output (all read_write, see wgsl_module.h) and no uniforms:
// shapes are compiled in, so equal nodes share one module (and one pipeline). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace websd::webgpu {

struct GeneratedWgsl {
  std::string family;        // "constant", "fused_elementwise": the file's name prefix
  std::string text;          // the complete module
  std::int64_t threads = 0;  // one per output element
};

// out[i] = values[i] for a `constant` node of `count` elements (values.size() == count, or one
// value broadcast). Throws websd::Error("codegen") for more than 65536 values (a WGSL constant
// array that large compiles slowly; such tensors belong in the weights).
GeneratedWgsl constant_wgsl(const std::vector<double>& values, std::int64_t count);

// out = concat(a, a) along an axis: a viewed as [outer, len, inner], out [outer, 2 * len, inner]
// (classifier-free guidance doubles the latents this way). One binding for `a`: WebGPU refuses a
// value bound twice next to a write (every binding is writable, see wgsl_module.h).
GeneratedWgsl concat_self_wgsl(std::int64_t outer, std::int64_t len, std::int64_t inner);

// The prologue every generated module starts with: the thread's linear index, and a return past `total`.
std::string generated_entry_prologue(std::int64_t total);

}  // namespace websd::webgpu
