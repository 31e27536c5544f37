/* The C ABI between websd's generated CPU kernel libraries (.so) and the runtime that loads them
 * (cpu/kernel_library.h). Plain C, standard headers only: codegen embeds this text verbatim into
 * every generated translation unit, so library and runtime agree by construction; a change here
 * that breaks old libraries must bump WEBSD_KERNEL_ABI_VERSION.
 *
 * A library exports, with default visibility and C linkage, only:
 *   - const char* websd_kernel_library_manifest(void): a static JSON text
 *       {"websd_version": "0.1.0", "abi": 1, "target": "cpu",
 *        "kernels": [{"name": "unet_fused_elementwise_0", "inputs": [[2,4,8,8],[4]], "output": [2,4,8,8]}]}
 *   - per kernel named N in the manifest, int websd_kernel_N(...) of type websd_kernel_fn.
 * A kernel reads float32 inputs of the manifest's shapes (row-major) and writes the float32 output;
 * shapes are compiled in. It returns 0 on success. It may split its work through `parallel_for`
 * (NULL: it runs serially on the calling thread); the runtime passes its thread pool as `pool`.
 * Kernels keep no state: concurrent calls on distinct outputs are safe. */
#ifndef WEBSD_CPU_KERNEL_ABI_H
#define WEBSD_CPU_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBSD_KERNEL_ABI_VERSION 1
#define WEBSD_KERNEL_MANIFEST_SYMBOL "websd_kernel_library_manifest"
#define WEBSD_KERNEL_SYMBOL_PREFIX "websd_kernel_"

/* Runs items [begin, end) of a kernel's work; `context` is the kernel's own. */
typedef void (*websd_range_fn)(void* context, int64_t begin, int64_t end);
/* Runs body over [0, count) split into disjoint ranges (of `min_chunk` items or more where count
 * allows), possibly concurrently, and returns when all are done. Must not throw or unwind. */
typedef void (*websd_parallel_for_fn)(void* pool, int64_t count, int64_t min_chunk, websd_range_fn body, void* context);
typedef int (*websd_kernel_fn)(const float* const* inputs, float* output, websd_parallel_for_fn parallel_for,
                               void* pool);
typedef const char* (*websd_manifest_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* WEBSD_CPU_KERNEL_ABI_H */
