// The functions WebGpuDevice imports from JavaScript: webgpu_bridge_library.js (linked with
// --js-library) implements each one by calling the GpuBridge (web/bridge/websd_gpu.mjs) that the
// embedding JS put on the module as `Module.websdGpu`. Only integers cross: handles (never 0),
// byte counts and offsets as doubles (exact below 2^53; wasm32 has no 64-bit JS integers without
// BigInt), and pointers into wasm memory, which the library reads or writes through a fresh heap
// view at each use (memory growth detaches old views).
//
// Errors: every function that can fail returns -1 after catching a JS exception (a GPU error the
// bridge kept, a bad handle, no bridge on the module) and keeps its message; the C++ side then
// takes it with websd_gpu_error_take and throws websd::Error. Single-threaded, like the bridge.
#pragma once

#include <cstdint>

extern "C" {

// 1 when Module.websdGpu holds a bridge, else 0.
int websd_gpu_attached(void);
// A limit of the bridge's GPUDevice by its WebGPU name; -1 when it has no such limit.
double websd_gpu_limit(const char* name);
// 1 when the GPUDevice was created with `feature`, else 0.
int websd_gpu_has_feature(const char* feature);
// Writes the adapter's description (UTF-8, NUL-terminated, cut to fit) into `out`; returns its
// full length in bytes without the NUL.
int websd_gpu_adapter_name(char* out, int capacity);

// A storage buffer of `bytes`: its handle, or -1.
int websd_gpu_create_buffer(double bytes);
// Frees a buffer, kernel or program handle (flushing first, so gathered commands that use it are
// submitted before it is destroyed). 0 or -1.
int websd_gpu_release(int handle);
// Copies `bytes` at `data` into the buffer at `offset` now. 0 or -1.
int websd_gpu_write_buffer(int handle, double offset, const void* data, double bytes);
int websd_gpu_copy_buffer(int from, double from_offset, int to, double to_offset, double bytes);
// Enqueues a read whose bytes the bridge copies to `destination` once the GPU is done. 0 or -1.
int websd_gpu_read_buffer(int handle, double offset, double bytes, void* destination);

// A kernel compiled in the background: `access` holds one code per storage binding (0 read,
// 1 write, 2 read-write); uniform_bytes 0 means no uniform binding. Its handle, or -1.
int websd_gpu_create_kernel(const char* code, const char* entry, const std::uint8_t* access, int binding_count,
                            int uniform_bytes, const char* label);
// A program from `launch_count` launches described in `table` (doubles, per launch: kernel handle,
// binding count, uniform offset into `uniforms`, uniform bytes, dispatch x, y, z, then per binding
// buffer handle, offset, bytes). Its handle, or -1.
int websd_gpu_create_program(const double* table, int launch_count, const std::uint8_t* uniforms);
// Encodes every launch of the program in one compute pass. 0 or -1.
int websd_gpu_run_program(int program);
// 1 when the device can time launches ('timestamp-query'), else 0.
int websd_gpu_can_time(void);
// Encodes every launch in its own timed compute pass; the seconds of each launch land in
// `seconds` (one double per launch) once the GPU is done, like a read. 0 or -1.
int websd_gpu_run_program_timed(int program, double* seconds);
// Submits the gathered commands and starts the reads waiting on them. 0 or -1.
int websd_gpu_flush(void);
// 1 when every read and compilation has been delivered, 0 while some are pending, -1 on an error.
int websd_gpu_poll(void);

// The kept error message's length in bytes (0 when none).
int websd_gpu_error_bytes(void);
// Writes the kept message into `out` (NUL-terminated, cut to fit) and forgets it.
void websd_gpu_error_take(char* out, int capacity);

}  // extern "C"
