// A device that completes nothing when it is asked: upload, download, copy and submit are queued
// and run on the wrapped device (the cpu target's, by default) only by wait(), which runs them all,
// or by poll(), which runs the oldest one per call and says whether the queue is empty. It is how
// the native tests hold the runtime and the pipeline to "valid only once the device has finished"
// (runtime/device.h), as a GPU behind WebGPU completes work later than it is enqueued: a download
// read too early still holds what was there before; an upload's source may be reused at once (it
// is copied when enqueued). Buffers that queued work touches are kept alive until it has run.
// Not thread-safe, as Device.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>

#include "support/forwarding_device.h"

namespace websd::test {

class DeferredDevice final : public ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;

  runtime::BufferPtr allocate(std::uint64_t bytes) override;
  runtime::BufferPtr import_weight(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data) override;
  void upload(const runtime::BufferRange& to, std::span<const std::byte> from) override;
  void download(const runtime::BufferRange& from, std::span<std::byte> to) override;
  void copy(const runtime::BufferRange& from, const runtime::BufferRange& to) override;
  void submit(runtime::DeviceProgram& program, runtime::LaunchTimes* times,
              const runtime::LaunchProgress* progress) override;
  void wait() override;
  bool poll() override;

  // Operations queued and not yet run.
  std::size_t pending() const { return queue_.size(); }
  // Operations queued so far (run or not).
  std::size_t enqueued() const { return enqueued_; }

 private:
  runtime::BufferPtr track(runtime::BufferPtr buffer);
  // The buffer behind a range's raw pointer, kept by the operation that uses it.
  runtime::BufferPtr keep(const runtime::BufferRange& range) const;
  void enqueue(std::function<void()> operation);

  std::deque<std::function<void()>> queue_;
  std::map<const runtime::DeviceBuffer*, std::weak_ptr<runtime::DeviceBuffer>> buffers_;
  std::size_t enqueued_ = 0;
};

}  // namespace websd::test
