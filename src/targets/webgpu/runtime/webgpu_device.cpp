#include "targets/webgpu/runtime/webgpu_device.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.h"
#include "core/message_text.h"
#include "targets/webgpu/runtime/webgpu_bridge_imports.h"

namespace websd::webgpu {
namespace {

// Weights stored in another float type than the device holds them in are converted in slices of
// this many elements (4 MiB of f32), so importing a 150 MB embedding never holds a second full copy
// in wasm memory.
constexpr std::size_t kConvertChunk = std::size_t{1} << 20;

// The message the library kept for the failed call, on one line, without the bridge's "webgpu: ".
std::string take_bridge_error() {
  std::vector<char> text(static_cast<std::size_t>(websd_gpu_error_bytes()) + 1);
  websd_gpu_error_take(text.data(), static_cast<int>(text.size()));
  std::string message(text.data());
  if (message.rfind("webgpu: ", 0) == 0) message.erase(0, 8);
  std::replace(message.begin(), message.end(), '\n', ' ');  // Dawn's messages span several lines
  return message_safe(message.empty() ? "the WebGPU bridge failed without a message" : message);
}

// A bridge call's result, or websd::Error("webgpu") with its message (after `context`, if any).
int check(int result, const std::string& context = {}) {
  if (result >= 0) return result;
  throw Error("webgpu", (context.empty() ? "" : context + ": ") + take_bridge_error());
}

// A GPUBuffer behind a bridge handle, released (after a flush) when the last owner drops it.
class WebGpuBuffer final : public runtime::DeviceBuffer {
 public:
  WebGpuBuffer(int handle, std::uint64_t bytes) : handle_(handle), bytes_(bytes) {}
  ~WebGpuBuffer() override { websd_gpu_release(handle_); }  // a failure here has nowhere to go
  WebGpuBuffer(const WebGpuBuffer&) = delete;
  WebGpuBuffer& operator=(const WebGpuBuffer&) = delete;
  std::uint64_t bytes() const override { return bytes_; }
  int handle() const { return handle_; }

 private:
  int handle_;
  std::uint64_t bytes_;
};

int handle_of(const runtime::DeviceBuffer* buffer) {
  const auto* gpu = dynamic_cast<const WebGpuBuffer*>(buffer);
  if (gpu == nullptr) throw Error("webgpu", "a buffer of another device was passed to the webgpu device");
  return gpu->handle();
}

// Kernels (one per kernel of the list, by index; the device's) and, once bound, the bridge program.
struct WebGpuProgram final : runtime::DeviceProgram {
  const runtime::LaunchList* list = nullptr;  // owned by the executor, which outlives the program
  std::vector<int> kernels;
  int program = 0;  // 0 until bound

  WebGpuProgram() = default;
  WebGpuProgram(const WebGpuProgram&) = delete;
  WebGpuProgram& operator=(const WebGpuProgram&) = delete;
  ~WebGpuProgram() override {
    if (program != 0) websd_gpu_release(program);
  }
};

WebGpuProgram& program_of(runtime::DeviceProgram& program) {
  auto* gpu = dynamic_cast<WebGpuProgram*>(&program);
  if (gpu == nullptr) throw Error("webgpu", "a program of another device was passed to the webgpu device");
  return *gpu;
}

// The bridge's code for a "storage" (read_write) binding in createKernel's layout.
constexpr std::uint8_t kReadWriteBinding = 2;

// Every storage binding is writable in the layouts (see prepare), so WebGPU refuses a dispatch
// whose bindings overlap in one buffer, and fails the whole command buffer later with a message
// about an unlabeled buffer. Refused here instead, naming the launch and the values.
void check_launch_aliasing(const runtime::LaunchList& list, std::size_t index,
                           const std::vector<runtime::BufferRange>& values) {
  const runtime::Launch& launch = list.launches[index];
  const std::string where =
      list.symbol + ": launch " + std::to_string(index) + " ('" + message_safe(list.kernel_of(launch).name, 120) + "')";
  for (std::size_t i = 0; i < launch.bindings.size(); ++i) {
    for (std::size_t j = i + 1; j < launch.bindings.size(); ++j) {
      const runtime::Binding& a = launch.bindings[i];
      const runtime::Binding& b = launch.bindings[j];
      const runtime::BufferRange& ra = values.at(static_cast<std::size_t>(a.value));
      const runtime::BufferRange& rb = values.at(static_cast<std::size_t>(b.value));
      if (ra.buffer != rb.buffer) continue;
      const bool overlap = ra.offset < rb.offset + rb.bytes && rb.offset < ra.offset + ra.bytes;
      if (overlap) {
        throw Error("artifact", where + " binds value " + std::to_string(a.value) + " (slot " + std::to_string(i) +
                                    ") and value " + std::to_string(b.value) + " (slot " + std::to_string(j) +
                                    ") to overlapping bytes of one buffer, which WebGPU forbids in one dispatch of "
                                    "writable bindings (bind the value once)");
      }
    }
  }
}

}  // namespace

WebGpuDevice::WebGpuDevice() {
  if (websd_gpu_attached() == 0) {
    throw Error("webgpu",
                "no GpuBridge on the module: create one with GpuBridge.create (web/bridge/websd_gpu.mjs) and pass "
                "it as `websdGpu` to the module factory before opening the webgpu device");
  }
  std::vector<char> adapter(256);
  const int length = check(websd_gpu_adapter_name(adapter.data(), static_cast<int>(adapter.size())));
  if (length >= static_cast<int>(adapter.size())) {
    adapter.resize(static_cast<std::size_t>(length) + 1);
    check(websd_gpu_adapter_name(adapter.data(), static_cast<int>(adapter.size())));
  }
  name_ = "webgpu (" + message_safe(adapter.data(), 200) + ")";
  const auto limit = [this](const char* limit_name) {
    const double value = websd_gpu_limit(limit_name);
    if (value < 0) {
      if (websd_gpu_error_bytes() > 0) check(-1, name_);
      throw Error("webgpu", name_ + ": the GPU device does not report limit " + limit_name);
    }
    return static_cast<std::uint64_t>(value);
  };
  limits_.max_buffer_bytes = limit("maxBufferSize");
  limits_.max_binding_bytes = limit("maxStorageBufferBindingSize");
  limits_.offset_alignment = limit("minStorageBufferOffsetAlignment");
  limits_.max_storage_buffers_per_stage = limit("maxStorageBuffersPerShaderStage");
  limits_.max_invocations_per_workgroup = limit("maxComputeInvocationsPerWorkgroup");
  limits_.max_workgroups_per_dimension = limit("maxComputeWorkgroupsPerDimension");
  limits_.shader_f16 = check(websd_gpu_has_feature("shader-f16"), name_) == 1;
  // f16 only where kernels may read it: the weights a tier with f16 kernels keeps in f16.
  limits_.value_dtypes = {DType::kF32, DType::kI32};
  if (limits_.shader_f16) limits_.value_dtypes.push_back(DType::kF16);
}

WebGpuDevice::~WebGpuDevice() {
  for (const auto& [key, kernel] : kernels_) websd_gpu_release(kernel);  // a failure here has nowhere to go
}

runtime::BufferPtr WebGpuDevice::allocate(std::uint64_t bytes) {
  if (bytes > limits_.max_buffer_bytes) {
    throw Error("webgpu", name_ + ": cannot allocate a buffer of " + std::to_string(bytes) +
                              " bytes; the GPU device's largest (maxBufferSize) is " +
                              std::to_string(limits_.max_buffer_bytes));
  }
  const int handle = check(websd_gpu_create_buffer(static_cast<double>(bytes)), name_);
  return std::make_shared<WebGpuBuffer>(handle, bytes);
}

runtime::BufferPtr WebGpuDevice::import_weight(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data) {
  const std::string where = name_ + ": weight '" + message_safe(weight.name, 200) + "'";
  const DType held = weight.type.dtype;  // the form the tier's kernels read it in
  if (held == DType::kF16 && !limits_.shader_f16) {
    throw Error("artifact", where + " is read as f16; this GPU device does not offer shader-f16 (another tier)");
  }
  if (data.dtype == held && (held == DType::kF32 || held == DType::kI32 || held == DType::kF16)) {
    runtime::BufferPtr buffer = allocate(data.bytes.size());
    upload({buffer.get(), 0, data.bytes.size()}, data.bytes);
    return buffer;
  }
  const bool float_stored = data.dtype == DType::kF32 || data.dtype == DType::kF16 || data.dtype == DType::kBF16;
  if (!float_stored || (held != DType::kF32 && held != DType::kF16)) {
    throw Error("artifact", where + " is stored as " + dtype_lower_name(data.dtype) + " and read as " +
                                dtype_lower_name(held) +
                                "; the webgpu device holds f32, i32 and (with shader-f16) f16 weights, read from "
                                "f32, f16 or bf16 floats");
  }
  // Converted slice by slice (f32 widened from f16/bf16, or f16 narrowed from f32/bf16), each
  // written (and so read) before the next.
  const std::size_t count = data.bytes.size() / dtype_size(data.dtype);
  const std::size_t out_size = dtype_size(held);
  runtime::BufferPtr buffer = allocate(count * out_size);
  std::vector<float> widened(std::min(count, kConvertChunk));
  std::vector<std::uint16_t> narrowed(held == DType::kF16 ? widened.size() : 0);
  for (std::size_t first = 0; first < count; first += kConvertChunk) {
    const std::size_t n = std::min(kConvertChunk, count - first);
    convert_to_f32(data.bytes.data() + first * dtype_size(data.dtype), data.dtype, n, widened.data());
    const void* bytes = widened.data();
    if (held == DType::kF16) {
      std::transform(widened.begin(), widened.begin() + static_cast<std::ptrdiff_t>(n), narrowed.begin(), f32_to_f16);
      bytes = narrowed.data();
    }
    check(websd_gpu_write_buffer(handle_of(buffer.get()), static_cast<double>(first * out_size), bytes,
                                 static_cast<double>(n * out_size)),
          where);
  }
  return buffer;
}

void WebGpuDevice::upload(const runtime::BufferRange& to, std::span<const std::byte> from) {
  if (from.size() != to.bytes) {
    throw Error("webgpu", name_ + ": upload of " + std::to_string(from.size()) + " bytes into a range of " +
                              std::to_string(to.bytes));
  }
  if (from.empty()) return;
  check(websd_gpu_write_buffer(handle_of(to.buffer), static_cast<double>(to.offset), from.data(),
                               static_cast<double>(from.size())),
        name_);
}

void WebGpuDevice::download(const runtime::BufferRange& from, std::span<std::byte> to) {
  if (to.size() != from.bytes) {
    throw Error("webgpu", name_ + ": download of a range of " + std::to_string(from.bytes) + " bytes into " +
                              std::to_string(to.size()));
  }
  if (to.empty()) return;
  check(websd_gpu_read_buffer(handle_of(from.buffer), static_cast<double>(from.offset), static_cast<double>(from.bytes),
                              to.data()),
        name_);
}

void WebGpuDevice::copy(const runtime::BufferRange& from, const runtime::BufferRange& to) {
  if (from.bytes != to.bytes) {
    throw Error("webgpu", name_ + ": copy between ranges of " + std::to_string(from.bytes) + " and " +
                              std::to_string(to.bytes) + " bytes");
  }
  if (from.bytes == 0) return;
  check(websd_gpu_copy_buffer(handle_of(from.buffer), static_cast<double>(from.offset), handle_of(to.buffer),
                              static_cast<double>(to.offset), static_cast<double>(from.bytes)),
        name_);
}

std::unique_ptr<runtime::DeviceProgram> WebGpuDevice::prepare(const runtime::LaunchList& list,
                                                              const runtime::KernelFileResolver& files) {
  auto program = std::make_unique<WebGpuProgram>();
  program->list = &list;
  std::map<std::string, std::string> sources;  // WGSL by artifact path: files shared by kernels read once
  for (const runtime::Kernel& kernel : list.kernels) {
    const std::string where = list.symbol + ": kernel '" + message_safe(kernel.name, 120) + "'";
    const std::string key = kernel.file + '\n' + kernel.entry + '\n' + std::to_string(kernel.bindings.size()) + '\n' +
                            std::to_string(kernel.uniform_bytes);
    if (kernel.source != "file") {
      throw Error("artifact", where + " is the built-in '" + message_safe(kernel.entry, 120) +
                                  "'; the webgpu device has no built-in kernels, only WGSL files (an artifact "
                                  "built for another target?)");
    }
    if (!files) {
      throw Error("artifact",
                  where + " needs kernel file '" + message_safe(kernel.file, 200) + "' but no artifact provides it");
    }
    if (const auto made = kernels_.find(key); made != kernels_.end()) {
      program->kernels.push_back(made->second);
      continue;
    }
    auto source = sources.find(kernel.file);
    if (source == sources.end()) {
      const runtime::KernelFile file = files(kernel.file);
      std::string text(reinterpret_cast<const char*>(file.bytes.data()), file.bytes.size());
      if (text.find('\0') != std::string::npos) {
        throw Error("artifact", where + ": kernel file '" + message_safe(kernel.file, 200) +
                                    "' holds a NUL byte, so it is not WGSL text (rebuild the artifact)");
      }
      source = sources.emplace(kernel.file, std::move(text)).first;
    }
    // Every binding writable ("storage"), as the compiler declares them read_write in WGSL
    // (targets/webgpu/codegen/wgsl_module.h): one arena buffer holds a launch's inputs and outputs,
    // and WebGPU forbids read-only and writable bindings of one buffer in one dispatch. The list's
    // access still says what each launch reads and writes.
    const std::vector<std::uint8_t> access(kernel.bindings.size(), kReadWriteBinding);
    const int made = check(websd_gpu_create_kernel(source->second.c_str(), kernel.entry.c_str(), access.data(),
                                                   static_cast<int>(access.size()),
                                                   static_cast<int>(kernel.uniform_bytes), kernel.name.c_str()),
                           where);
    kernels_.emplace(key, made);
    program->kernels.push_back(made);
  }
  return program;
}

void WebGpuDevice::bind(runtime::DeviceProgram& program, const std::vector<runtime::BufferRange>& values) {
  WebGpuProgram& gpu = program_of(program);
  const runtime::LaunchList& list = *gpu.list;
  // The table websd_gpu_create_program reads (webgpu_bridge_imports.h) and every launch's uniforms.
  std::vector<double> table;
  std::vector<std::uint8_t> uniforms;
  for (std::size_t l = 0; l < list.launches.size(); ++l) {
    const runtime::Launch& launch = list.launches[l];
    check_launch_aliasing(list, l, values);
    table.insert(table.end(), {static_cast<double>(gpu.kernels.at(static_cast<std::size_t>(launch.kernel))),
                               static_cast<double>(launch.bindings.size()), static_cast<double>(uniforms.size()),
                               static_cast<double>(launch.uniforms.size()), static_cast<double>(launch.dispatch[0]),
                               static_cast<double>(launch.dispatch[1]), static_cast<double>(launch.dispatch[2])});
    for (const runtime::Binding& binding : launch.bindings) {
      const runtime::BufferRange& range = values.at(static_cast<std::size_t>(binding.value));
      table.insert(table.end(), {static_cast<double>(handle_of(range.buffer)), static_cast<double>(range.offset),
                                 static_cast<double>(range.bytes)});
    }
    for (const std::byte b : launch.uniforms) uniforms.push_back(static_cast<std::uint8_t>(b));
  }
  const int made = check(
      websd_gpu_create_program(table.data(), static_cast<int>(list.launches.size()), uniforms.data()), list.symbol);
  if (gpu.program != 0) websd_gpu_release(gpu.program);  // re-bound (new arenas): the old one goes
  gpu.program = made;
}

void WebGpuDevice::submit(runtime::DeviceProgram& program, runtime::LaunchTimes* times,
                          const runtime::LaunchProgress* /*progress*/) {
  WebGpuProgram& gpu = program_of(program);
  if (gpu.program == 0) throw Error("webgpu", gpu.list->symbol + ": submitted before it was bound");
  if (times != nullptr && check(websd_gpu_can_time(), gpu.list->symbol) == 1) {
    // Filled when the GPU is done; the executor keeps `times` until it has waited.
    times->seconds.assign(gpu.list->launches.size(), 0.0);
    check(websd_gpu_run_program_timed(gpu.program, times->seconds.data()), gpu.list->symbol);
  } else {
    if (times != nullptr) times->seconds.clear();  // no timestamps on this adapter: no times
    check(websd_gpu_run_program(gpu.program), gpu.list->symbol);
  }
  check(websd_gpu_flush(), gpu.list->symbol);
}

bool WebGpuDevice::poll() {
  check(websd_gpu_flush());  // a read waits for its copy to be submitted
  return check(websd_gpu_poll()) == 1;
}

void WebGpuDevice::wait() {
  if (poll()) return;
  throw Error("webgpu", name_ +
                            ": work is still pending on the GPU, and WebAssembly cannot block until it is done: "
                            "await the bridge's settled() (or poll() until true) before wait()");
}

}  // namespace websd::webgpu
