#include "targets/cpu/runtime/cpu_device.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <functional>
#include <vector>

#include "core/error.h"
#include "ops/op_registry.h"
#include "targets/cpu/runtime/bf16_attention.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/kernel_library.h"
#include "targets/cpu/runtime/onednn_conv.h"
#include "targets/cpu/runtime/onednn_linear.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

constexpr std::uint64_t kAlignment = 64;  // cache lines, AVX-512 loads

// Host memory: allocated here (aligned), or adopted from a weight source that keeps it alive.
class CpuBuffer final : public runtime::DeviceBuffer {
 public:
  CpuBuffer(std::byte* data, std::uint64_t bytes, std::shared_ptr<const void> owner)
      : data_(data), bytes_(bytes), owner_(std::move(owner)) {}
  std::uint64_t bytes() const override { return bytes_; }
  std::byte* data() const { return data_; }

 private:
  std::byte* data_;
  std::uint64_t bytes_;
  std::shared_ptr<const void> owner_;
};

CpuBuffer& cpu_buffer(runtime::DeviceBuffer* buffer) {
  auto* cpu = dynamic_cast<CpuBuffer*>(buffer);
  if (cpu == nullptr) throw Error("cpu", "a buffer of another device was passed to the cpu device");
  return *cpu;
}

using LaunchFn = std::function<void(const std::vector<const CpuTensor*>&, CpuTensor&)>;

struct CpuProgram final : runtime::DeviceProgram {
  const runtime::LaunchList* list = nullptr;  // owned by the executor, which outlives the program
  std::vector<LaunchFn> launch_fns;           // parallel to list->launches
  std::vector<std::shared_ptr<const KernelLibrary>> libraries;
  // Weights in a kernel's layout (check_weight_layouts): the value and the bytes its kernel reads,
  // checked when bound.
  std::vector<std::pair<std::int32_t, std::uint64_t>> packed_weights;
  // Bound state: every value as a CpuTensor view, and each launch's operands.
  std::vector<CpuTensor> values;
  std::vector<std::vector<const CpuTensor*>> operands;
  std::vector<CpuTensor*> outputs;
};

std::string launch_where(const runtime::LaunchList& list, std::size_t index, const runtime::Kernel& kernel) {
  return list.symbol + ": launch " + std::to_string(index) + " of '" + kernel.entry + "'";
}

std::vector<TensorType> types_of(const runtime::LaunchList& list, const std::vector<std::int32_t>& ids) {
  std::vector<TensorType> types;
  for (const auto id : ids) types.push_back(list.values[id].type);
  return types;
}

// The op's own type inference over the launch's operands: what the graph verifier checked when the
// function was compiled, checked again because the list may have been edited since.
void check_operand_types(const runtime::LaunchList& list, std::size_t index, const runtime::Launch& launch) {
  const runtime::Kernel& kernel = list.kernel_of(launch);
  const std::string where = launch_where(list, index, kernel);
  const ops::OpDef* op = nullptr;
  try {
    op = &ops::op_lookup(kernel.entry);
  } catch (const Error&) {
    throw Error("artifact", where + ": no such op (built by a newer websd?)");
  }
  const std::vector<TensorType> inputs = types_of(list, launch.reads());
  const std::vector<TensorType> outputs = types_of(list, launch.writes());
  if (static_cast<int>(inputs.size()) < op->min_inputs || static_cast<int>(inputs.size()) > op->max_inputs) {
    throw Error("artifact", where + ": reads " + std::to_string(inputs.size()) + " values; the op takes " +
                                std::to_string(op->min_inputs) + " to " + std::to_string(op->max_inputs));
  }
  std::vector<TensorType> inferred;
  try {
    inferred = op->infer(inputs, launch.attrs);
  } catch (const Error& error) {
    throw Error("artifact", where + ": its operands do not fit the op: " + error.what());
  }
  if (inferred != outputs) {
    throw Error("artifact", where + ": writes " + std::to_string(outputs.size()) +
                                " values whose types differ from what the op computes from its inputs");
  }
}

// A packed convolution weight is only usable by a kernel that wants exactly its layout; returns
// the bytes that kernel reads of it (0 for a weight in plain OIHW).
std::uint64_t check_conv_weight_layout(const runtime::LaunchList& list, const runtime::Launch& launch) {
  const std::vector<std::int32_t> reads = launch.reads();
  const runtime::LaunchValue& value = list.values[reads.at(1)];
  if (value.placement != runtime::Placement::kWeight) return 0;
  const runtime::LaunchWeight& weight = list.weights[static_cast<std::size_t>(value.index)];
  std::vector<const TensorType*> types;
  for (const auto id : reads) types.push_back(&list.values[id].type);
  const ConvGeometry geometry = conv2d_nhwc_geometry(types, launch.attrs, list.values[launch.writes().at(0)].type);
  const std::string wanted = conv_weight_layout(geometry);
  if (wanted != weight.layout) {
    throw Error("artifact", list.symbol + ": weight '" + weight.name + "' is stored in kernel layout '" +
                                weight.layout + "' but this CPU's convolution kernel wants '" + wanted +
                                "': the artifact was built for another CPU or by another websd version; "
                                "rebuild it here with websd build");
  }
  return wanted.empty() ? 0 : conv_packed_weight_bytes(geometry);
}

// A weight stored in a kernel's own layout (packed, or narrowed to bf16) holds bytes that only the
// kernel it was made for can read: a convolution's weight operand in the layout its primitive
// wants, or a bf16 linear layer's. Records what each such kernel reads of it in `packed` (checked
// against the buffers when bound) and refuses any other reader.
void check_weight_layouts(const runtime::LaunchList& list, const runtime::Launch& launch, const std::string& where,
                          std::vector<std::pair<std::int32_t, std::uint64_t>>& packed) {
  const runtime::Kernel& kernel = list.kernel_of(launch);
  const bool builtin = kernel.source != "file";
  const std::vector<std::int32_t> reads = launch.reads();
  for (std::size_t slot = 0; slot < reads.size(); ++slot) {
    const runtime::LaunchValue& value = list.values[reads[slot]];
    const bool is_weight = value.placement == runtime::Placement::kWeight;
    const std::string& layout = is_weight ? list.weights[static_cast<std::size_t>(value.index)].layout : "";
    if (builtin && slot == 1 && kernel.entry == "conv2d_nhwc") {
      if (const std::uint64_t bytes = check_conv_weight_layout(list, launch); bytes > 0) {
        packed.emplace_back(reads[slot], bytes);
      }
      continue;
    }
    if (builtin && slot == 1 && kernel.entry == "linear" &&
        ((computes_in_bf16(launch.attrs, "linear") && layout == kLinearBf16Layout) ||
         (holds_weights_in_f16(launch.attrs, "linear") && layout == kLinearF16Layout))) {
      packed.emplace_back(reads[slot], static_cast<std::uint64_t>(value.type.numel()) * sizeof(std::uint16_t));
      continue;
    }
    if (!layout.empty()) {
      throw Error("artifact", where + ": reads weight '" + list.weights[static_cast<std::size_t>(value.index)].name +
                                  "', stored in kernel layout '" + layout +
                                  "', which this kernel does not read (the launch lists were edited or are corrupt: "
                                  "rebuild the artifact)");
    }
  }
}

}  // namespace

CpuDevice::CpuDevice() {
  limits_.max_buffer_bytes = std::uint64_t{1} << 48;
  limits_.max_binding_bytes = std::uint64_t{1} << 48;
  limits_.offset_alignment = kAlignment;
  limits_.value_dtypes = {DType::kF32, DType::kI64};
  limits_.adopts_weight_bytes = true;  // f32 weights are used in place from the mapped shards
}

CpuDevice::~CpuDevice() = default;

std::byte* CpuDevice::address(const runtime::BufferRange& range) {
  CpuBuffer& buffer = cpu_buffer(range.buffer);
  if (range.offset > buffer.bytes() || range.bytes > buffer.bytes() - range.offset) {
    throw Error("cpu", "a range of " + std::to_string(range.bytes) + " bytes at " + std::to_string(range.offset) +
                           " lies outside its buffer of " + std::to_string(buffer.bytes()));
  }
  return buffer.data() + range.offset;
}

runtime::BufferPtr CpuDevice::allocate(std::uint64_t bytes) {
  const std::uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* data = rounded == 0 ? nullptr : std::aligned_alloc(kAlignment, static_cast<std::size_t>(rounded));
  if (data == nullptr && rounded != 0) {
    throw Error("cpu", "cannot allocate a buffer of " + std::to_string(bytes) + " bytes (out of memory)");
  }
  const std::shared_ptr<void> owner(data, [](void* p) { std::free(p); });
  return std::make_shared<CpuBuffer>(static_cast<std::byte*>(data), bytes, owner);
}

runtime::BufferPtr CpuDevice::import_weight(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data) {
  if (weight_layout_holds_bf16(weight.layout)) return import_bf16_packed(weight, data);
  if (weight_layout_holds_f16(weight.layout)) return import_f16_packed(weight, data);
  if (data.dtype == DType::kF32) {
    // In place: the source's owner (a mapped shard, a loaded tensor) lives as long as the buffer.
    return std::make_shared<CpuBuffer>(const_cast<std::byte*>(data.bytes.data()), data.bytes.size(), data.owner);
  }
  if (data.dtype != DType::kF16 && data.dtype != DType::kBF16) {
    throw Error("artifact", "weight '" + weight.name + "' is stored as " + dtype_lower_name(data.dtype) +
                                "; the cpu device reads f32, f16 and bf16 weights");
  }
  const std::size_t count = data.bytes.size() / dtype_size(data.dtype);
  runtime::BufferPtr widened = allocate(count * sizeof(float));
  convert_to_f32(data.bytes.data(), data.dtype, count, reinterpret_cast<float*>(cpu_buffer(widened.get()).data()));
  return widened;
}

// A convolution weight packed for a bf16 kernel: its bf16 bytes are used in place (a --dtype bf16
// artifact's mapped shard), f32 or f16 values (a checkpoint's, packed in the same element order)
// are narrowed to bf16 once.
runtime::BufferPtr CpuDevice::import_bf16_packed(const runtime::LaunchWeight& weight,
                                                 const runtime::WeightBytes& data) {
  if (data.dtype == DType::kBF16) {
    return std::make_shared<CpuBuffer>(const_cast<std::byte*>(data.bytes.data()), data.bytes.size(), data.owner);
  }
  if (data.dtype != DType::kF32 && data.dtype != DType::kF16) {
    throw Error("artifact", "weight '" + weight.name + "' is stored as " + dtype_lower_name(data.dtype) +
                                "; its bf16 convolution reads f32, f16 or bf16 weights");
  }
  const std::size_t count = data.bytes.size() / dtype_size(data.dtype);
  runtime::BufferPtr narrowed = allocate(count * sizeof(std::uint16_t));
  auto* bits = reinterpret_cast<std::uint16_t*>(cpu_buffer(narrowed.get()).data());
  constexpr std::size_t kSlice = 1 << 16;  // widened f16 values in slices, not a whole f32 copy
  std::vector<float> widened(std::min(count, kSlice));
  for (std::size_t begin = 0; begin < count; begin += kSlice) {
    const std::size_t n = std::min(kSlice, count - begin);
    const float* values = reinterpret_cast<const float*>(data.bytes.data()) + begin;
    if (data.dtype == DType::kF16) {
      convert_to_f32(data.bytes.data() + begin * sizeof(std::uint16_t), DType::kF16, n, widened.data());
      values = widened.data();
    }
    for (std::size_t i = 0; i < n; ++i) bits[begin + i] = f32_to_bf16(values[i]);
  }
  return narrowed;
}

// A weight held as f16 for kernels that widen it per call: its f16 bytes are used in place (a
// --dtype f16 artifact's mapped shard), f32 values (a checkpoint's, packed in the same element
// order) are narrowed to f16 once.
runtime::BufferPtr CpuDevice::import_f16_packed(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data) {
  if (data.dtype == DType::kF16) {
    return std::make_shared<CpuBuffer>(const_cast<std::byte*>(data.bytes.data()), data.bytes.size(), data.owner);
  }
  if (data.dtype != DType::kF32) {
    throw Error("artifact", "weight '" + weight.name + "' is stored as " + dtype_lower_name(data.dtype) +
                                "; its kernel holds it in f16 and reads f32 or f16 weights");
  }
  const std::size_t count = data.bytes.size() / sizeof(float);
  runtime::BufferPtr narrowed = allocate(count * sizeof(std::uint16_t));
  auto* bits = reinterpret_cast<std::uint16_t*>(cpu_buffer(narrowed.get()).data());
  const auto* values = reinterpret_cast<const float*>(data.bytes.data());
  parallel_for(static_cast<std::int64_t>(count), 1 << 16,
               [&](std::int64_t begin, std::int64_t end) { narrow_to_f16(values + begin, bits + begin, end - begin); });
  return narrowed;
}

void CpuDevice::upload(const runtime::BufferRange& to, std::span<const std::byte> from) {
  if (from.size() != to.bytes)
    throw Error("cpu",
                "upload of " + std::to_string(from.size()) + " bytes into a range of " + std::to_string(to.bytes));
  if (!from.empty()) std::memcpy(address(to), from.data(), from.size());
}

void CpuDevice::download(const runtime::BufferRange& from, std::span<std::byte> to) {
  if (to.size() != from.bytes)
    throw Error("cpu",
                "download of a range of " + std::to_string(from.bytes) + " bytes into " + std::to_string(to.size()));
  if (!to.empty()) std::memcpy(to.data(), address(from), to.size());
}

void CpuDevice::copy(const runtime::BufferRange& from, const runtime::BufferRange& to) {
  if (from.bytes != to.bytes)
    throw Error("cpu",
                "copy between ranges of " + std::to_string(from.bytes) + " and " + std::to_string(to.bytes) + " bytes");
  if (from.bytes != 0) std::memmove(address(to), address(from), static_cast<std::size_t>(from.bytes));
}

std::unique_ptr<runtime::DeviceProgram> CpuDevice::prepare(const runtime::LaunchList& list,
                                                           const runtime::KernelFileResolver& files) {
  auto program = std::make_unique<CpuProgram>();
  program->list = &list;
  for (std::size_t l = 0; l < list.launches.size(); ++l) {
    const runtime::Launch& launch = list.launches[l];
    const runtime::Kernel& kernel = list.kernel_of(launch);
    const std::string where = launch_where(list, l, kernel);
    if (launch.writes().size() != 1 || launch.reads().size() + 1 != launch.bindings.size()) {
      throw Error("artifact", where + ": the cpu device runs kernels that write one value and only read the others");
    }
    if (kernel.source == "file") {
      if (!files)
        throw Error("artifact", where + " needs kernel file '" + kernel.file + "' but no artifact provides it");
      // dlopen loads by name: the library needs the artifact in a local folder.
      const runtime::KernelFile file = files(kernel.file);
      if (!file.local_path) {
        throw Error("artifact", where + ": the cpu device loads kernel library '" + kernel.file +
                                    "' from a local file, and this artifact is not in a local folder (copy it to "
                                    "one and open that)");
      }
      auto& library = libraries_[*file.local_path];
      if (!library) library = std::make_shared<const KernelLibrary>(KernelLibrary::open(*file.local_path));
      program->libraries.push_back(library);
      const LibraryKernel& entry = library->kernel(kernel.entry);
      for (const auto& binding : launch.bindings) {
        if (list.values[binding.value].type.dtype != DType::kF32)
          throw Error("artifact", where + ": generated kernels read and write f32 values only");
      }
      std::vector<Shape> reads;
      for (const auto id : launch.reads()) reads.push_back(list.values[id].type.shape);
      if (reads != entry.inputs || list.values[launch.writes()[0]].type.shape != entry.output) {
        throw Error("artifact", where +
                                    ": its operand shapes differ from the kernel library's (the launch lists "
                                    "were edited or are corrupt: rebuild the artifact)");
      }
      check_weight_layouts(list, launch, where, program->packed_weights);
      const KernelLibrary* owner = library.get();
      program->launch_fns.push_back(
          [owner, &entry](const std::vector<const CpuTensor*>& in, CpuTensor& out) { owner->run(entry, in, out); });
      continue;
    }
    const CpuKernel* cpu_kernel = cpu_kernel_lookup(kernel.entry);
    if (cpu_kernel == nullptr)
      throw Error("artifact", where + ": this runtime's CPU target has no such kernel (built by a newer websd?)");
    check_operand_types(list, l, launch);
    check_weight_layouts(list, launch, where, program->packed_weights);
    const Attrs* attrs = &launch.attrs;
    program->launch_fns.push_back([cpu_kernel, attrs](const std::vector<const CpuTensor*>& in, CpuTensor& out) {
      (*cpu_kernel)(in, *attrs, out);
    });
  }
  return program;
}

void CpuDevice::bind(runtime::DeviceProgram& generic, const std::vector<runtime::BufferRange>& ranges) {
  auto& program = dynamic_cast<CpuProgram&>(generic);
  const runtime::LaunchList& list = *program.list;
  program.values.assign(list.values.size(), CpuTensor{});
  for (std::size_t v = 0; v < list.values.size(); ++v) {
    const runtime::LaunchValue& value = list.values[v];
    program.values[v] = CpuTensor::view(value.type, address(ranges.at(v)));
    if (value.placement == runtime::Placement::kWeight) {
      program.values[v].layout = list.weights[static_cast<std::size_t>(value.index)].layout;
    }
  }
  for (const auto& [id, bytes] : program.packed_weights) {
    const runtime::BufferRange& range = ranges.at(static_cast<std::size_t>(id));
    if (range.buffer->bytes() - range.offset < bytes) {
      throw Error("artifact", list.symbol + ": packed weight '" +
                                  list.weights[static_cast<std::size_t>(list.values[id].index)].name + "' holds " +
                                  std::to_string(range.buffer->bytes() - range.offset) + " bytes; its kernel reads " +
                                  std::to_string(bytes) + " (edited or corrupt: rebuild the artifact)");
    }
  }
  program.operands.assign(list.launches.size(), {});
  program.outputs.assign(list.launches.size(), nullptr);
  for (std::size_t l = 0; l < list.launches.size(); ++l) {
    for (const auto id : list.launches[l].reads()) program.operands[l].push_back(&program.values[id]);
    program.outputs[l] = &program.values[list.launches[l].writes().at(0)];
  }
}

void CpuDevice::submit(runtime::DeviceProgram& generic, runtime::LaunchTimes* times,
                       const runtime::LaunchProgress* progress) {
  auto& program = dynamic_cast<CpuProgram&>(generic);
  if (program.outputs.size() != program.launch_fns.size()) throw Error("cpu", program.list->symbol + ": not bound");
  if (times != nullptr) times->seconds.assign(program.launch_fns.size(), 0.0);
  for (std::size_t l = 0; l < program.launch_fns.size(); ++l) {
    const auto start = std::chrono::steady_clock::now();
    program.launch_fns[l](program.operands[l], *program.outputs[l]);
    if (times != nullptr) {
      times->seconds[l] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (progress != nullptr) (*progress)(l + 1, program.launch_fns.size());
  }
}

void CpuDevice::trim() { release_cpu_kernel_caches(); }

void release_cpu_kernel_caches() {
  conv_release_caches();
  linear_release_caches();
  attention_release_caches();
  // oneDNN keeps the JIT code of every primitive made in a cache of its own (1024 by default):
  // emptied too, so that a network run earlier leaves no code behind for the next one's memory.
  const int capacity = dnnl::get_primitive_cache_capacity();
  dnnl::set_primitive_cache_capacity(0);
  dnnl::set_primitive_cache_capacity(capacity);
  malloc_trim(0);
}

}  // namespace websd::cpu
