// Tensors a backend keeps where it runs its networks (device memory on a GPU, host memory on the
// CPU), and reads of them back to the host. The pipeline passes handles from one backend call to
// the next without reading them, so a denoising step moves only what the host must see: the
// scheduler's input up, the prediction down; the text context is uploaded once per run.
//
// A handle is immutable once made (backends never write into a handle they returned), which lets
// a backend skip copying a handle into a function's input slot that holds it already (the context,
// the same for every step). Handles are cheap to copy (shared). Float32 values.
#pragma once

#include <functional>
#include <memory>

#include "core/host_tensor.h"

namespace websd {

class DeviceTensor {
 public:
  DeviceTensor() = default;
  // `maker` identifies the backend (its address); `storage` is that backend's own representation.
  DeviceTensor(const void* maker, Shape shape, std::shared_ptr<const void> storage);

  const Shape& shape() const { return shape_; }
  bool empty() const { return storage_ == nullptr; }
  // For the backend that made it: its storage. Throws websd::Error("pipeline") for an empty handle
  // or one another backend made (the pipeline never mixes them; this catches a programming error).
  const std::shared_ptr<const void>& storage_for(const void* maker) const;

 private:
  const void* maker_ = nullptr;
  Shape shape_;
  std::shared_ptr<const void> storage_;
};

// A read of a DeviceTensor to the host that the backend has enqueued. A device that reads back
// asynchronously (WebGPU's mapAsync) completes it in the background; a JavaScript caller awaits the
// device until ready() and only then calls wait(), which then does not block.
class TensorDownload {
 public:
  // `finish` hands the tensor over, waiting for the device if needed; `ready` says without
  // blocking whether it would wait (empty: never, the tensor is on the host already).
  explicit TensorDownload(std::function<HostTensor()> finish, std::function<bool()> ready = {});
  // Whether wait() would return without waiting for the device (Device::poll). True once waited.
  bool ready() const;
  // The tensor, waiting for the device if the copy has not finished. Throws websd::Error when
  // called twice (the bytes were handed over already).
  HostTensor wait();

 private:
  std::function<HostTensor()> finish_;
  std::function<bool()> ready_;
};

}  // namespace websd
