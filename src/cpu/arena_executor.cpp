#include "cpu/arena_executor.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "cpu/cpu_kernels.h"
#include "cpu/kernel_library.h"
#include "cpu/onednn_conv.h"

namespace websd::cpu {
namespace {

std::string shapes_text(const runtime::LaunchList& list, const runtime::Launch& launch) {
  // Appended piece by piece: `"literal" + std::string&&` trips GCC 12's false -Wrestrict (PR 105329).
  std::string text;
  for (const auto id : launch.inputs) {
    if (!text.empty()) text += ' ';
    text += shape_to_string(list.values[id].type.shape);
  }
  text += " -> ";
  text += shape_to_string(list.values[launch.output].type.shape);
  return text;
}

}  // namespace

void ArenaExecutor::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

ArenaExecutor::ArenaExecutor(runtime::LaunchList list, const KernelLibrary* library) : list_(std::move(list)) {
  // The reader bounds-checks an arena value by its declared dtype, but this executor stores every
  // float as f32 and every integer as i64: a value declared f16 or i32 near the arena's end would
  // pass the reader and be written past the arena. Only the dtypes stored natively are accepted.
  for (std::size_t v = 0; v < list_.values.size(); ++v) {
    const DType dtype = list_.values[v].type.dtype;
    if (dtype != DType::kF32 && dtype != DType::kI64) {
      std::string message = list_.symbol + ": value " + std::to_string(v) + " is ";
      message += dtype_lower_name(dtype);
      message +=
          "; the CPU runtime stores only f32 and i64 values (an edited artifact, or one built for another target?)";
      throw Error("artifact", message);
    }
  }
  for (const auto& launch : list_.launches) {
    const std::string where = list_.symbol + ": launch of '" + launch.op + "'";
    if (!launch.kernel.empty()) {
      if (library == nullptr)
        throw Error("artifact",
                    where + " needs generated kernel '" + launch.kernel + "' but no kernel library is loaded");
      const LibraryKernel& kernel = library->kernel(launch.kernel);
      launch_fns_.push_back([library, &kernel](const std::vector<const CpuTensor*>& in, CpuTensor& out) {
        library->run(kernel, in, out);
      });
      profile_keys_.push_back(launch.kernel + " " + shapes_text(list_, launch));
    } else {
      const CpuKernel* kernel = cpu_kernel_lookup(launch.op);
      if (kernel == nullptr)
        throw Error("artifact", where + ": this runtime's CPU target has no such kernel (built by a newer websd?)");
      const Attrs* attrs = &launch.attrs;
      launch_fns_.push_back(
          [kernel, attrs](const std::vector<const CpuTensor*>& in, CpuTensor& out) { (*kernel)(in, *attrs, out); });
      profile_keys_.push_back(launch.op + " " + shapes_text(list_, launch));
    }
    std::vector<const Shape*> shapes;
    for (const auto id : launch.inputs) shapes.push_back(&list_.values[id].type.shape);
    launch_flops_.push_back(kernel_flops(launch.op, shapes, list_.values[launch.output].type.numel()));
  }
}

ArenaExecutor::~ArenaExecutor() = default;

void ArenaExecutor::bind_weights(const WeightBinder& binder) {
  std::vector<CpuTensor> weights;
  for (const auto& weight : list_.weights) {
    CpuTensor tensor = binder(weight);
    if (tensor.f32 && static_cast<std::int64_t>(tensor.f32->size()) < weight.type.numel()) {
      throw Error("cpu", list_.symbol + ": weight '" + weight.name + "' holds " + std::to_string(tensor.f32->size()) +
                             " values, fewer than " + weight.type.to_string());
    }
    tensor.type = weight.type;
    tensor.layout = weight.layout;
    weights.push_back(std::move(tensor));
  }
  // A packed convolution weight is only usable by a kernel that wants exactly its layout.
  for (const auto& launch : list_.launches) {
    if (launch.op != "conv2d_nhwc") continue;
    const auto& value = list_.values[launch.inputs.at(1)];
    if (value.placement != runtime::Placement::kWeight) continue;
    const auto& weight = list_.weights[value.index];
    std::vector<const TensorType*> types;
    for (const auto id : launch.inputs) types.push_back(&list_.values[id].type);
    const std::string wanted =
        conv_weight_layout(conv2d_nhwc_geometry(types, launch.attrs, list_.values[launch.output].type));
    if (wanted != weight.layout) {
      throw Error("artifact", list_.symbol + ": weight '" + weight.name + "' is stored in kernel layout '" +
                                  weight.layout + "' but this CPU's convolution kernel wants '" + wanted +
                                  "': the artifact was built for another CPU; rebuild it here with websd build");
    }
  }
  weights_ = std::move(weights);
}

void ArenaExecutor::release_arena() { arena_.reset(); }

std::vector<CpuTensor> ArenaExecutor::run(const std::vector<CpuTensor>& inputs) {
  if (weights_.size() != list_.weights.size()) throw Error("cpu", list_.symbol + ": weights not bound");
  if (inputs.size() != list_.inputs.size()) {
    throw Error("cpu", list_.symbol + ": expects " + std::to_string(list_.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& expected = list_.values[list_.inputs[i]].type;
    if (inputs[i].type != expected) {
      throw Error("cpu", list_.symbol + ": input '" + list_.input_names[i] + "' must be " + expected.to_string() +
                             ", got " + inputs[i].type.to_string());
    }
  }
  if (!arena_ && list_.arena_bytes > 0) {
    const auto bytes = static_cast<std::size_t>((list_.arena_bytes + runtime::kArenaAlignment - 1) /
                                                runtime::kArenaAlignment * runtime::kArenaAlignment);
    arena_.reset(static_cast<std::byte*>(std::aligned_alloc(runtime::kArenaAlignment, bytes)));
    if (!arena_)
      throw Error("cpu", list_.symbol + ": cannot allocate its arena of " + std::to_string(bytes) + " bytes");
  }

  // Every value as a view: of the caller's input, of a weight, or of the arena.
  std::vector<CpuTensor> values(list_.values.size());
  for (std::size_t v = 0; v < list_.values.size(); ++v) {
    const auto& value = list_.values[v];
    switch (value.placement) {
      case runtime::Placement::kInput: {
        const CpuTensor& input = inputs[static_cast<std::size_t>(value.index)];
        values[v] = CpuTensor::view(value.type, dtype_is_float(value.type.dtype)
                                                    ? static_cast<void*>(const_cast<float*>(input.fdata()))
                                                    : static_cast<void*>(const_cast<std::int64_t*>(input.idata())));
        break;
      }
      case runtime::Placement::kWeight:
        values[v] = weights_[static_cast<std::size_t>(value.index)];
        values[v].type = value.type;
        break;
      case runtime::Placement::kArena:
        values[v] = CpuTensor::view(value.type, arena_.get() + value.offset);
        break;
    }
  }

  std::vector<const CpuTensor*> operands;
  for (std::size_t l = 0; l < list_.launches.size(); ++l) {
    const auto& launch = list_.launches[l];
    const auto start = std::chrono::steady_clock::now();
    operands.clear();
    for (const auto id : launch.inputs) operands.push_back(&values[id]);
    launch_fns_[l](operands, values[launch.output]);
    if (profile_ != nullptr) {
      profile_->add(profile_keys_[l], std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                    launch_flops_[l]);
    }
  }

  std::vector<CpuTensor> outputs;
  for (const auto id : list_.outputs) {
    const CpuTensor& value = values[id];
    CpuTensor copy = CpuTensor::allocate(value.type);
    const bool is_float = dtype_is_float(value.type.dtype);
    std::memcpy(is_float ? static_cast<void*>(copy.fdata()) : static_cast<void*>(copy.i64->data()),
                is_float ? static_cast<const void*>(value.fdata()) : static_cast<const void*>(value.idata()),
                static_cast<std::size_t>(value.numel()) * (is_float ? sizeof(float) : sizeof(std::int64_t)));
    outputs.push_back(std::move(copy));
  }
  return outputs;
}

}  // namespace websd::cpu
