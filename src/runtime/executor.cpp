#include "runtime/executor.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/message_text.h"
#include "core/stopwatch.h"
#include "runtime/edge_values.h"

namespace websd::runtime {
namespace {

std::span<const std::byte> as_bytes_of(const void* data, std::uint64_t bytes) {
  return {static_cast<const std::byte*>(data), static_cast<std::size_t>(bytes)};
}

// A slot's allocation: never zero bytes, so every device can back it.
std::uint64_t slot_bytes(const TensorType& type) { return std::max<std::uint64_t>(value_bytes(type), 16); }

}  // namespace

std::uint64_t value_bytes(const TensorType& type) {
  return static_cast<std::uint64_t>(type.numel()) * dtype_size(type.dtype);
}

void check_fits_device(const LaunchList& list, const Device& device) {
  const DeviceLimits& limits = device.limits();
  const std::string where = list.symbol + " on " + device.name();
  // The reader bounds-checks every value by its declared dtype; a device that stored a dtype in
  // another width (the CPU keeps floats as f32) would then write past an arena. Refuse them here.
  for (std::size_t v = 0; v < list.values.size(); ++v) {
    const TensorType& type = list.values[v].type;
    if (std::find(limits.value_dtypes.begin(), limits.value_dtypes.end(), type.dtype) == limits.value_dtypes.end()) {
      std::string stored;
      for (const DType dtype : limits.value_dtypes) (stored += stored.empty() ? "" : ", ") += dtype_lower_name(dtype);
      throw Error("artifact", where + ": value " + std::to_string(v) + " is " + dtype_lower_name(type.dtype) +
                                  "; this device stores only " + stored +
                                  " values (an edited artifact, or one built for another target?)");
    }
    if (value_bytes(type) > limits.max_binding_bytes) {
      throw Error("artifact", where + ": value " + std::to_string(v) + " " + type.to_string() + " needs " +
                                  std::to_string(value_bytes(type)) + " bytes, more than one binding of " +
                                  std::to_string(limits.max_binding_bytes) + " (rebuild for a smaller size)");
    }
  }
  if (static_cast<std::uint64_t>(list.memory.alignment) % limits.offset_alignment != 0) {
    throw Error("artifact", where + ": the list's arenas are aligned to " + std::to_string(list.memory.alignment) +
                                " bytes; this device binds at multiples of " + std::to_string(limits.offset_alignment) +
                                " (built for another target?)");
  }
  for (std::size_t a = 0; a < list.memory.arenas.size(); ++a) {
    if (static_cast<std::uint64_t>(list.memory.arenas[a]) > limits.max_buffer_bytes) {
      throw Error("artifact", where + ": arena " + std::to_string(a) + " of " + std::to_string(list.memory.arenas[a]) +
                                  " bytes exceeds this device's largest buffer of " +
                                  std::to_string(limits.max_buffer_bytes) + " (built for another target?)");
    }
  }
  // A GPU's kernel limits, checked before any pipeline is made (0: the device has none).
  const auto over = [](std::uint64_t value, std::uint64_t limit) { return limit != 0 && value > limit; };
  for (const Kernel& kernel : list.kernels) {
    const auto& size = kernel.workgroup_size;
    const auto threads = static_cast<std::uint64_t>(size[0] * size[1] * size[2]);
    if (over(kernel.bindings.size(), limits.max_storage_buffers_per_stage) ||
        over(threads, limits.max_invocations_per_workgroup)) {
      throw Error("artifact", where + ": kernel '" + message_safe(kernel.name, 120) + "' binds " +
                                  std::to_string(kernel.bindings.size()) + " storage buffers with " +
                                  std::to_string(threads) + " threads per workgroup; this device allows " +
                                  std::to_string(limits.max_storage_buffers_per_stage) + " and " +
                                  std::to_string(limits.max_invocations_per_workgroup) +
                                  " (its limits maxStorageBuffersPerShaderStage, maxComputeInvocationsPerWorkgroup)");
    }
  }
  for (std::size_t l = 0; l < list.launches.size(); ++l) {
    for (const auto groups : list.launches[l].dispatch) {
      if (over(static_cast<std::uint64_t>(groups), limits.max_workgroups_per_dimension)) {
        throw Error("artifact", where + ": launch " + std::to_string(l) + " dispatches " + std::to_string(groups) +
                                    " workgroups in one dimension; this device allows " +
                                    std::to_string(limits.max_workgroups_per_dimension) +
                                    " (maxComputeWorkgroupsPerDimension)");
      }
    }
  }
}

Executor::Executor(Device& device, LaunchList list, const KernelFileResolver& files)
    : device_(device), list_(std::move(list)) {
  check_fits_device(list_, device_);
  program_ = device_.prepare(list_, files);
  for (const auto id : list_.inputs) input_slots_.push_back(device_.allocate(slot_bytes(list_.values[id].type)));
  for (const auto id : list_.outputs) output_slots_.push_back(device_.allocate(slot_bytes(list_.values[id].type)));
  input_sources_.resize(input_slots_.size());
}

Executor::~Executor() = default;

BufferPtr import_weight(Device& device, WeightSource& source, const LaunchWeight& weight, const std::string& symbol,
                        WeightLoadTimes* times) {
  const Stopwatch read_time;
  const WeightBytes data = source.read(weight);
  if (times != nullptr) times->read_s += read_time.seconds();
  // A packed weight may be padded, never smaller; a row-major one is exactly its type.
  const auto logical = static_cast<std::uint64_t>(weight.type.numel()) * dtype_size(data.dtype);
  if (weight.layout.empty() ? data.bytes.size() != logical : data.bytes.size() < logical) {
    throw Error("artifact", symbol + ": weight '" + weight.name + "' holds " + std::to_string(data.bytes.size()) +
                                " bytes of " + dtype_lower_name(data.dtype) + ", its launch list wants " +
                                weight.type.to_string() + " (edited or corrupt: rebuild the artifact)");
  }
  const Stopwatch import_time;
  BufferPtr buffer = device.import_weight(weight, data);
  if (times != nullptr) {
    times->import_s += import_time.seconds();
    times->bytes += data.bytes.size();
    ++times->weights;
  }
  return buffer;
}

void Executor::bind_weights(WeightSource& source, DeviceWeightCache* shared, WeightLoadTimes* times) {
  std::vector<BufferPtr> weights;
  weights.reserve(list_.weights.size());
  for (const LaunchWeight& weight : list_.weights) {
    if (shared != nullptr) {
      if (BufferPtr imported = shared->find(weight)) {
        weights.push_back(std::move(imported));
        continue;
      }
    }
    weights.push_back(import_weight(device_, source, weight, list_.symbol, times));
    if (shared != nullptr) shared->remember(weight, weights.back());
  }
  weights_ = std::move(weights);
  bound_ = false;
}

void Executor::release_weights() {
  weights_.clear();
  bound_ = false;
}

BufferRange Executor::input_slot(std::size_t i) const {
  return {input_slots_.at(i).get(), 0, value_bytes(list_.values[list_.inputs[i]].type)};
}

BufferRange Executor::output_slot(std::size_t i) const {
  return {output_slots_.at(i).get(), 0, value_bytes(list_.values[list_.outputs[i]].type)};
}

void Executor::check_input_index(std::size_t i) const {
  if (i >= list_.inputs.size()) {
    throw Error("runtime", list_.symbol + ": has " + std::to_string(list_.inputs.size()) + " inputs, not " +
                               std::to_string(i + 1));
  }
}

void Executor::set_input(std::size_t i, const HostTensor& tensor) {
  check_input_index(i);
  const TensorType& expected = list_.values[list_.inputs[i]].type;
  if (!floats_fit(expected.dtype) || expected.shape != tensor.shape ||
      tensor.data.size() != static_cast<std::size_t>(tensor.numel())) {
    throw Error("runtime", list_.symbol + ": input '" + list_.input_names[i] + "' must be " + expected.to_string() +
                               ", got " + TensorType{DType::kF32, tensor.shape}.to_string());
  }
  if (expected.dtype == DType::kF32) {
    device_.upload(input_slot(i), as_bytes_of(tensor.data.data(), value_bytes(expected)));
  } else {  // converted at the edge; the upload has read the staging bytes when it returns
    floats_to(tensor.data, expected.dtype, staging_);
    device_.upload(input_slot(i), staging_);
  }
  input_sources_[i].reset();
}

void Executor::set_input(std::size_t i, std::span<const std::int64_t> values, const Shape& shape) {
  check_input_index(i);
  const TensorType& expected = list_.values[list_.inputs[i]].type;
  if (!ids_fit(expected.dtype) || expected.shape != shape ||
      values.size() != static_cast<std::size_t>(shape_numel(shape))) {
    throw Error("runtime", list_.symbol + ": input '" + list_.input_names[i] + "' must be " + expected.to_string() +
                               ", got " + TensorType{DType::kI64, shape}.to_string());
  }
  if (expected.dtype == DType::kI64) {
    device_.upload(input_slot(i), as_bytes_of(values.data(), value_bytes(expected)));
  } else {
    ids_to(values, expected.dtype, staging_);
    device_.upload(input_slot(i), staging_);
  }
  input_sources_[i].reset();
}

void Executor::set_input(std::size_t i, const BufferPtr& source) {
  check_input_index(i);
  const BufferRange slot = input_slot(i);
  if (source == nullptr || source->bytes() != slot.bytes) {
    throw Error("runtime", list_.symbol + ": input '" + list_.input_names[i] + "' " +
                               list_.values[list_.inputs[i]].type.to_string() + " takes " + std::to_string(slot.bytes) +
                               " bytes, the device buffer given holds " +
                               std::to_string(source == nullptr ? 0 : source->bytes()));
  }
  if (input_sources_[i].lock() == source) return;  // holds those (immutable) bytes already
  device_.copy({source.get(), 0, slot.bytes}, slot);
  input_sources_[i] = source;
}

BufferPtr Executor::copy_output(std::size_t i, BufferCache& buffers) {
  if (i >= list_.outputs.size()) {
    throw Error("runtime", list_.symbol + ": has " + std::to_string(list_.outputs.size()) + " outputs, not " +
                               std::to_string(i + 1));
  }
  const BufferRange slot = output_slot(i);
  BufferPtr copy = buffers.acquire(slot.bytes);
  device_.copy(slot, {copy.get(), 0, slot.bytes});
  return copy;
}

// Where every value lives: input slots, weight buffers, arena offsets. Views share their owner's
// place; a view of an input or weight starts at its beginning.
void Executor::bind_values() {
  std::vector<BufferRange> ranges(list_.values.size());
  for (std::size_t v = 0; v < list_.values.size(); ++v) {
    const LaunchValue& value = list_.values[v];
    const std::uint64_t bytes = value_bytes(value.type);
    switch (value.placement) {
      case Placement::kInput:
        ranges[v] = {input_slots_[static_cast<std::size_t>(value.index)].get(), 0, bytes};
        break;
      case Placement::kWeight: {
        DeviceBuffer* buffer = weights_[static_cast<std::size_t>(value.index)].get();
        // A packed weight is its kernel's opaque bytes (padded, or narrower than its type, as a
        // bf16 convolution's): the device checks what its kernel reads (Device::bind).
        if (!list_.weights[value.index].layout.empty()) {
          ranges[v] = {buffer, 0, buffer->bytes()};
          break;
        }
        if (bytes > buffer->bytes()) {
          throw Error("artifact", list_.symbol + ": value " + std::to_string(v) + " " + value.type.to_string() +
                                      " is larger than weight '" + list_.weights[value.index].name + "' as imported");
        }
        ranges[v] = {buffer, 0, bytes};
        break;
      }
      case Placement::kArena:
        ranges[v] = {arenas_[static_cast<std::size_t>(value.arena)].get(), static_cast<std::uint64_t>(value.offset),
                     bytes};
        break;
    }
  }
  device_.bind(*program_, ranges);
  bound_ = true;
}

void Executor::submit() {
  if (!weights_bound()) throw Error("runtime", list_.symbol + ": weights not bound");
  if (arenas_.empty() && !list_.memory.arenas.empty()) {
    for (const std::int64_t bytes : list_.memory.arenas) {
      arenas_.push_back(device_.allocate(std::max<std::uint64_t>(static_cast<std::uint64_t>(bytes), 16)));
    }
    bound_ = false;
  }
  if (!bound_) bind_values();
  // The last timed submit's times, when nobody waited on this executor since (its output was
  // copied out and downloaded through the device): kept if the device has finished it.
  if (timed_submit_) poll();
  timed_submit_ = profile_ != nullptr;
  const bool report = launch_progress_ != nullptr && *launch_progress_;
  device_.submit(*program_, timed_submit_ ? &times_ : nullptr, report ? launch_progress_ : nullptr);
  for (std::size_t i = 0; i < list_.outputs.size(); ++i) {
    const LaunchValue& value = list_.values[list_.outputs[i]];
    BufferRange from{nullptr, 0, value_bytes(value.type)};
    switch (value.placement) {
      case Placement::kInput:
        from.buffer = input_slots_[static_cast<std::size_t>(value.index)].get();
        break;
      case Placement::kWeight:
        from.buffer = weights_[static_cast<std::size_t>(value.index)].get();
        break;
      case Placement::kArena:
        from.buffer = arenas_[static_cast<std::size_t>(value.arena)].get();
        from.offset = static_cast<std::uint64_t>(value.offset);
        break;
    }
    device_.copy(from, output_slot(i));
  }
}

void Executor::wait() {
  device_.wait();
  finish_downloads();
  add_times();
}

void Executor::add_times() {
  if (!timed_submit_ || profile_ == nullptr) return;
  timed_submit_ = false;
  if (profile_keys_.empty()) {
    for (const Launch& launch : list_.launches) {
      profile_keys_.push_back(launch_profile_key(list_, launch));
      launch_flops_.push_back(launch_flops(list_, launch));
    }
  }
  for (std::size_t l = 0; l < times_.seconds.size() && l < list_.launches.size(); ++l) {
    profile_->add(profile_keys_[l], times_.seconds[l], launch_flops_[l]);
  }
}

bool Executor::poll() {
  if (!device_.poll()) return false;
  finish_downloads();
  add_times();
  return true;
}

void Executor::finish_downloads() {
  for (PendingDownload& pending : downloads_) {
    if (pending.dtype == DType::kF32) continue;  // the device wrote the tensor itself
    convert_to_f32(pending.bytes.data(), pending.dtype, pending.into->data.size(), pending.into->data.data());
  }
  downloads_.clear();
}

void Executor::download_output(std::size_t i, std::shared_ptr<HostTensor> into) {
  if (i >= list_.outputs.size()) {
    throw Error("runtime", list_.symbol + ": has " + std::to_string(list_.outputs.size()) + " outputs, not " +
                               std::to_string(i + 1));
  }
  const TensorType& type = list_.values[list_.outputs[i]].type;
  if (!floats_fit(type.dtype)) {
    throw Error("runtime",
                list_.symbol + ": output " + std::to_string(i) + " is " + type.to_string() + ", not a float tensor");
  }
  *into = HostTensor(type.shape, std::vector<float>(static_cast<std::size_t>(type.numel())));
  PendingDownload& pending = downloads_.emplace_back();
  pending.dtype = type.dtype;
  pending.into = std::move(into);
  if (type.dtype == DType::kF32) {
    device_.download(output_slot(i), std::as_writable_bytes(std::span<float>(pending.into->data)));
    return;
  }
  // 16-bit floats land in staging bytes, widened into the tensor once the device has finished.
  pending.bytes.resize(value_bytes(type));
  device_.download(output_slot(i), pending.bytes);
}

HostTensor Executor::read_output(std::size_t i) {
  auto tensor = std::make_shared<HostTensor>();
  download_output(i, tensor);
  wait();
  return std::move(*tensor);
}

void set_sample_inputs(Executor& executor) {
  const LaunchList& list = executor.launch_list();
  for (std::size_t i = 0; i < list.inputs.size(); ++i) {
    const TensorType& type = list.values[list.inputs[i]].type;
    const auto count = static_cast<std::size_t>(type.numel());
    if (dtype_is_float(type.dtype)) {
      HostTensor input(type.shape, std::vector<float>(count));
      for (std::size_t e = 0; e < count; ++e) input.data[e] = 0.01f * static_cast<float>(e % 197) - 0.9f;
      executor.set_input(i, input);
    } else {
      std::vector<std::int64_t> ids(count);
      for (std::size_t e = 0; e < count; ++e) ids[e] = static_cast<std::int64_t>(e % 256);
      executor.set_input(i, ids, type.shape);
    }
  }
}

void Executor::release_arena() {
  arenas_.clear();
  bound_ = false;
}

}  // namespace websd::runtime
