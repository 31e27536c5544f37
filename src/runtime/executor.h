// Runs one function's launch list (launch_list.h) on any Device (device.h): the one executor every
// target shares. It checks the list against the device at load (every value's dtype stored
// natively, every arena and binding within the device's limits, every kernel runnable), binds the
// weights from a streaming WeightSource (one at a time: read, check, import, drop), owns the
// planned arenas (allocated on the first submit, kept until release_arena()), and keeps stable
// input and output slots (buffers that never move, as CUDA graphs and WebGPU bind groups want).
// Each submit runs every launch in order; with a profile attached, each launch is timed into it.
//
//   runtime::Executor executor(device, list, resolve_kernel_file);
//   executor.bind_weights(source);
//   executor.set_input(0, latents);
//   executor.submit();
//   HostTensor out = executor.read_output(0);  // download + wait (or download_output, poll, wait)
//
// Ownership: borrows the device (which must outlive it), owns list, program, arenas and slots.
// Not thread-safe: one submit at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "runtime/buffer_cache.h"
#include "runtime/device.h"
#include "runtime/device_weight_cache.h"
#include "runtime/launch_list.h"
#include "runtime/load_times.h"
#include "runtime/op_profile.h"

namespace websd::runtime {

// Where weights come from: an artifact's shards, a checkpoint's tensors. read() may return bytes
// that stay valid only until the next read(), unless WeightBytes::owner keeps them.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Throws websd::Error naming the weight when the source lacks it.
  virtual WeightBytes read(const LaunchWeight& weight) = 0;
};

// Reads `weight` from `source` and imports it into `device`, checked as Executor::bind_weights
// checks it (`symbol`, the list's, names it in errors); with `times`, adds the read's and the
// import's seconds and bytes.
BufferPtr import_weight(Device& device, WeightSource& source, const LaunchWeight& weight, const std::string& symbol,
                        WeightLoadTimes* times = nullptr);

class Executor {
 public:
  // Throws websd::Error("artifact") for a list that does not fit the device (check_fits_device: a
  // value dtype it does not store, an arena larger than its largest buffer, a value larger than its
  // largest binding) or a kernel it cannot run (see Device::prepare).
  Executor(Device& device, LaunchList list, const KernelFileResolver& files = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const LaunchList& launch_list() const { return list_; }
  Device& device() { return device_; }

  // Imports every weight the list names. A row-major weight must hold exactly its type's bytes (in
  // the source's dtype), a packed one at least that many; else websd::Error("artifact") naming it.
  // With `shared`, a weight another executor imported into this device and still holds is reused
  // without reading the source (device_weight_cache.h), and each new import is recorded there.
  // With `times`, the reads' and imports' seconds and bytes are added to it.
  void bind_weights(WeightSource& source, DeviceWeightCache* shared = nullptr, WeightLoadTimes* times = nullptr);
  void release_weights();
  bool weights_bound() const { return weights_.size() == list_.weights.size(); }

  // Fixed for the executor's life: input i and output i live in these ranges.
  BufferRange input_slot(std::size_t i) const;
  BufferRange output_slot(std::size_t i) const;
  // Uploads into input slot i after checking the shape against the list: float32 values into a
  // float input (converted at the edge when the slot is f16 or bf16), int64 ids into an integer
  // input (narrowed, range checked, when the slot is i32: devices without i64, such as WGSL's).
  // The host values may be reused at once (the upload has read them).
  void set_input(std::size_t i, const HostTensor& tensor);
  void set_input(std::size_t i, std::span<const std::int64_t> values, const Shape& shape);
  // Copies device buffer `source` (exactly input i's bytes, as the list lays them out) into input
  // slot i on the device. The caller never writes `source` afterwards (device tensors are
  // immutable), so the copy is skipped while the slot holds its bytes already: the text context,
  // the same for every step.
  void set_input(std::size_t i, const BufferPtr& source);

  // Enqueues the function on what the input slots hold; its outputs land in the output slots.
  void submit();
  // Waits for the device, completes the downloads (widening 16-bit outputs), and adds the
  // launches' times to the profile when one is attached.
  void wait();
  // Whether the device has finished everything enqueued (Device::poll), completing the downloads
  // and adding the launch times to the profile when it has; then wait() does not block.
  bool poll();
  // Enqueues the download of output i (a float value: f32, or f16/bf16 widened to float32 at the
  // edge) into `into` (reshaped to its type), filled once the device has finished and this
  // executor's wait() or poll() has seen it; the executor holds `into` until then, so a caller
  // that stops waiting (a cancelled run) leaves nothing to be written into freed memory.
  void download_output(std::size_t i, std::shared_ptr<HostTensor> into);
  // download_output, then wait().
  HostTensor read_output(std::size_t i);
  // A device buffer from `buffers` holding output i of the last submit, copied on the device: the
  // caller's to keep after later submits overwrite the slot (from a cache, so that a step that
  // drops the previous step's output allocates nothing).
  BufferPtr copy_output(std::size_t i, BufferCache& buffers);

  // Frees the arenas (the next submit allocates them again).
  void release_arena();
  std::int64_t arena_bytes() const { return list_.memory.total_bytes(); }

  // When set, every launch of later submits is timed into `profile` under launch_profile_key.
  void set_profile(OpProfile* profile) { profile_ = profile; }
  // When set (and the function it points to is not empty), later submits report their launches to
  // `*progress` as they finish (Device::submit). Borrowed: it must outlive the executor or be unset.
  void set_launch_progress(const LaunchProgress* progress) { launch_progress_ = progress; }

 private:
  void bind_values();
  void check_input_index(std::size_t i) const;
  void finish_downloads();
  // Adds the launch times of the last timed submit to the profile (once the device has finished it).
  void add_times();

  // A download the device has not finished: into `into` itself (f32), or, for a 16-bit output,
  // into `bytes` as the device stores them, widened into `into` then.
  struct PendingDownload {
    std::vector<std::byte> bytes;
    DType dtype = DType::kF32;
    std::shared_ptr<HostTensor> into;
  };

  Device& device_;
  LaunchList list_;
  std::unique_ptr<DeviceProgram> program_;
  std::vector<BufferPtr> weights_;
  std::vector<BufferPtr> arenas_;
  std::vector<BufferPtr> input_slots_, output_slots_;
  std::vector<std::weak_ptr<DeviceBuffer>> input_sources_;  // the device buffer each slot was copied from
  std::vector<std::byte> staging_;                          // an input converted at the edge
  std::vector<PendingDownload> downloads_;
  bool bound_ = false;
  OpProfile* profile_ = nullptr;
  const LaunchProgress* launch_progress_ = nullptr;
  LaunchTimes times_;
  bool timed_submit_ = false;
  std::vector<std::string> profile_keys_;  // parallel to list_.launches, made when first profiled
  std::vector<double> launch_flops_;
};

// The checks an Executor makes of `list` before it prepares it: every value's dtype one the device
// stores (DeviceLimits::value_dtypes), every value within one binding, the arenas' alignment a
// multiple of the device's and each arena within its largest buffer. Throws websd::Error("artifact")
// naming the function, the device and the first problem. A backend runs it on every list when it
// opens an artifact, so a list the device cannot run fails before any network has run.
void check_fits_device(const LaunchList& list, const Device& device);

// Fills every input slot of `executor` with deterministic values: floats 0.01 * (i % 197) - 0.9,
// integers i % 256 (byte-level token ids, which every CLIP vocabulary has). For `websd profile`,
// benchmarks and the executing fuzz target, which run a function without real inputs.
void set_sample_inputs(Executor& executor);

// The bytes a value of `type` occupies (numel x dtype size).
std::uint64_t value_bytes(const TensorType& type);

}  // namespace websd::runtime
