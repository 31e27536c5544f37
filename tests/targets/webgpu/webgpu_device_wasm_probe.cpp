// A small wasm module for webgpu_device.test.mjs: it opens the "webgpu" device through the
// run-side registry and drives runtime::Executor over hand-made launch lists with hand-written
// WGSL kernels. The Node test calls these C functions in halves, awaiting the bridge between them
// (wasm never blocks), and compares what they leave with numbers it computes itself.
// Every function returns 0 (or a count) on success and -1 after a websd::Error, whose text
// probe_error() gives. Single-threaded, like the module.
#include <emscripten/emscripten.h>

#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/host_tensor.h"
#include "runtime/executor.h"
#include "runtime/launch_list.h"
#include "targets/device_registry.h"

namespace websd {
namespace {

// out[i] = a[i] * scale + b[i] for i < n, with n and scale in a 16-byte uniform block.
constexpr const char* kScaleAdd = R"(
struct Params { n: u32, scale: f32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
@compute @workgroup_size(64)
fn scale_add(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < params.n) { out[id.x] = a[id.x] * params.scale + b[id.x]; }
}
)";

// out[i] = t[i] * t[i] + x[i], no uniforms. Every binding is declared read_write, as the compiler
// writes them: `t` lives in the arena `out` is written to, and WebGPU refuses a buffer bound
// read-only and writable in one dispatch.
constexpr const char* kSquareAdd = R"(
@group(0) @binding(0) var<storage, read_write> t: array<f32>;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn square_add(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&out)) { out[id.x] = t[id.x] * t[id.x] + x[id.x]; }
}
)";

constexpr const char* kBroken = R"(
@group(0) @binding(0) var<storage, read_write> t: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn square_add(@builtin(global_invocation_id) id: vec3<u32>) { out[id.x] = undefined_name; }
)";

constexpr std::int64_t kN = 8;
const std::vector<float> kInput = {0.5f, -1.0f, 1.5f, 2.0f, -2.5f, 3.0f, 0.25f, -0.75f};
const std::vector<float> kWeight = {1.0f, -0.5f, 0.125f, 2.0f, -3.0f, 0.75f, 1.5f, -1.25f};  // exact in f16

// kF16Weight: the weight held in f16 (as the subgroup-matrix tier holds its GEMMs' weights).
enum Variant { kGood = 0, kCompileError = 1, kBuiltin = 2, kOverlap = 3, kTooManyWorkgroups = 4, kF16Weight = 5 };

std::vector<std::byte> uniforms_of(std::uint32_t n, float scale) {
  std::vector<std::byte> bytes(16);
  std::memcpy(bytes.data(), &n, 4);
  std::memcpy(bytes.data() + 4, &scale, 4);
  return bytes;
}

// x (input 0), w (weight, imported from f16), then in one 768-byte arena: t1 = x*3 + w at 256,
// t2 = t1*t1 + x at 0, t3 = x*-2 + w at 512; outputs t2 and t3. Three launches of two kernels.
runtime::LaunchList make_list(Variant variant) {
  using runtime::Access;
  using runtime::Placement;
  const TensorType f32{DType::kF32, {kN}};
  runtime::LaunchList list;
  list.symbol = "probe";
  list.values = {{f32, Placement::kInput, 0},
                 {f32, Placement::kWeight, 0},
                 {f32, Placement::kArena, -1, 0, 256},
                 {f32, Placement::kArena, -1, 0, 0},
                 {f32, Placement::kArena, -1, 0, 512}};
  list.inputs = {0};
  list.input_names = {"x"};
  list.weights = {{"w", "", f32}};
  list.outputs = {3, 4};
  const auto kernel = [](const char* name, std::vector<Access> bindings, std::int64_t uniform_bytes) {
    runtime::Kernel k;
    k.name = k.entry = name;
    k.source = "file";
    k.file = std::string("kernels/") + name + ".wgsl";
    k.workgroup_size = {64, 1, 1};
    k.bindings = std::move(bindings);
    k.uniform_bytes = uniform_bytes;
    return k;
  };
  runtime::Kernel scale_add = kernel("scale_add", {Access::kRead, Access::kRead, Access::kWrite}, 16);
  scale_add.uniforms = {{"n", "u32", 0}, {"scale", "f32", 4}};
  runtime::Kernel square_add = kernel("square_add", {Access::kRead, Access::kRead, Access::kWrite}, 0);
  if (variant == kCompileError) square_add.file = "kernels/broken.wgsl";
  if (variant == kBuiltin) square_add.source = "builtin";
  list.kernels = {scale_add, square_add};
  const auto launch = [](std::int32_t k, std::vector<runtime::Binding> bindings, std::vector<std::byte> uniforms) {
    runtime::Launch l;
    l.kernel = k;
    l.bindings = std::move(bindings);
    l.uniforms = std::move(uniforms);
    return l;
  };
  list.launches = {
      launch(0, {{0, Access::kRead}, {1, Access::kRead}, {2, Access::kWrite}}, uniforms_of(kN, 3.0f)),
      launch(1, {{2, Access::kRead}, {variant == kOverlap ? 2 : 0, Access::kRead}, {3, Access::kWrite}}, {}),
      launch(0, {{0, Access::kRead}, {1, Access::kRead}, {4, Access::kWrite}}, uniforms_of(kN, -2.0f))};
  // Over WebGPU's 65535 workgroups per dimension: a validation error the bridge keeps until poll.
  if (variant == kTooManyWorkgroups) list.launches[2].dispatch = {70000, 1, 1};
  if (variant == kF16Weight) list.weights[0].type.dtype = list.values[1].type.dtype = DType::kF16;
  list.memory.alignment = 256;
  list.memory.max_buffer_bytes = 1 << 20;
  list.memory.arenas = {768};
  list.memory.peak_bytes = 768;
  // Through the artifact's reader, which checks the list as it would one from an artifact.
  return runtime::launch_list_from_json(runtime::launch_list_to_json(list));
}

runtime::KernelFile kernel_file(const std::string& path) {
  const char* text = path == "kernels/scale_add.wgsl"    ? kScaleAdd
                     : path == "kernels/square_add.wgsl" ? kSquareAdd
                     : path == "kernels/broken.wgsl"     ? kBroken
                                                         : nullptr;
  if (text == nullptr) throw Error("artifact", "no kernel file '" + path + "' in the probe");
  const auto* bytes = reinterpret_cast<const std::byte*>(text);
  return {std::vector<std::byte>(bytes, bytes + std::strlen(text)), std::nullopt};
}

// The weight as f16 bytes, as a checkpoint in half precision holds it.
class HalfWeightSource final : public runtime::WeightSource {
 public:
  runtime::WeightBytes read(const runtime::LaunchWeight&) override {
    bytes_.clear();
    for (const float value : kWeight) {
      const std::uint16_t half = f32_to_f16(value);
      bytes_.push_back(static_cast<std::byte>(half & 0xff));
      bytes_.push_back(static_cast<std::byte>(half >> 8));
    }
    return {bytes_, DType::kF16, nullptr};
  }

 private:
  std::vector<std::byte> bytes_;
};

std::unique_ptr<runtime::Device> device;
std::unique_ptr<runtime::Executor> executor;
std::vector<std::shared_ptr<HostTensor>> outputs = {std::make_shared<HostTensor>(), std::make_shared<HostTensor>()};
std::vector<char> ballast;  // grows wasm memory on request (probe_grow_memory)
std::string last_error;
std::string text;  // what a string-returning probe function returned last

template <typename F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const Error& error) {
    last_error = error.what();
    return -1;
  }
}

}  // namespace
}  // namespace websd

using namespace websd;

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* probe_error() { return last_error.c_str(); }

// Opens the registry's "webgpu" device.
EMSCRIPTEN_KEEPALIVE int probe_open() {
  return guarded([] {
    device = targets::open_device("webgpu");
    return 0;
  });
}

// The device's name and limits as JSON.
EMSCRIPTEN_KEEPALIVE const char* probe_describe() {
  const runtime::DeviceLimits& limits = device->limits();
  nlohmann::json dtypes = nlohmann::json::array();
  for (const DType dtype : limits.value_dtypes) dtypes.push_back(dtype_lower_name(dtype));
  text = nlohmann::json{{"name", device->name()},
                        {"max_buffer_bytes", limits.max_buffer_bytes},
                        {"max_binding_bytes", limits.max_binding_bytes},
                        {"offset_alignment", limits.offset_alignment},
                        {"value_dtypes", dtypes},
                        {"shader_f16", limits.shader_f16}}
             .dump();
  return text.c_str();
}

// Makes an executor for list `variant` (prepare: kernels start compiling) and binds its weight.
EMSCRIPTEN_KEEPALIVE int probe_load(int variant) {
  return guarded([variant] {
    executor.reset();
    executor = std::make_unique<runtime::Executor>(*device, make_list(static_cast<Variant>(variant)), kernel_file);
    HalfWeightSource weights;
    executor->bind_weights(weights);
    return 0;
  });
}

// Sets the input, submits, and enqueues both outputs' downloads.
EMSCRIPTEN_KEEPALIVE int probe_run() {
  return guarded([] {
    executor->set_input(0, HostTensor({kN}, kInput));
    executor->submit();
    executor->download_output(0, outputs[0]);
    executor->download_output(1, outputs[1]);
    return 0;
  });
}

EMSCRIPTEN_KEEPALIVE int probe_wait() {
  return guarded([] {
    executor->wait();
    return 0;
  });
}

// 1 when everything has finished, 0 while work is pending.
EMSCRIPTEN_KEEPALIVE int probe_poll() {
  return guarded([] { return executor ? (executor->poll() ? 1 : 0) : (device->poll() ? 1 : 0); });
}

// Allocates and touches `mib` MiB more than before, so wasm memory grows (old heap views detach).
EMSCRIPTEN_KEEPALIVE int probe_grow_memory(int mib) {
  ballast.resize(ballast.size() + (static_cast<std::size_t>(mib) << 20), 1);
  return 0;
}

EMSCRIPTEN_KEEPALIVE float probe_output(int output, int index) {
  return outputs.at(static_cast<std::size_t>(output))->data.at(static_cast<std::size_t>(index));
}

EMSCRIPTEN_KEEPALIVE int probe_close() {
  return guarded([] {
    executor.reset();
    device.reset();
    return 0;
  });
}

}  // extern "C"
