#include "support/deferred_device.h"

#include <vector>

#include "core/error.h"

namespace websd::test {

runtime::BufferPtr DeferredDevice::track(runtime::BufferPtr buffer) {
  buffers_[buffer.get()] = buffer;  // an address reused after a free replaces its old entry
  return buffer;
}

runtime::BufferPtr DeferredDevice::keep(const runtime::BufferRange& range) const {
  const auto found = buffers_.find(range.buffer);
  runtime::BufferPtr buffer = found == buffers_.end() ? nullptr : found->second.lock();
  if (buffer == nullptr) throw Error("deferred", "a range of a buffer this device did not make, or freed");
  return buffer;
}

void DeferredDevice::enqueue(std::function<void()> operation) {
  queue_.push_back(std::move(operation));
  enqueued_ += 1;
}

runtime::BufferPtr DeferredDevice::allocate(std::uint64_t bytes) { return track(ForwardingDevice::allocate(bytes)); }

runtime::BufferPtr DeferredDevice::import_weight(const runtime::LaunchWeight& weight,
                                                 const runtime::WeightBytes& data) {
  return track(ForwardingDevice::import_weight(weight, data));
}

void DeferredDevice::upload(const runtime::BufferRange& to, std::span<const std::byte> from) {
  enqueue([this, to, buffer = keep(to), bytes = std::vector<std::byte>(from.begin(), from.end())] {
    inner().upload(to, bytes);
  });
}

void DeferredDevice::download(const runtime::BufferRange& from, std::span<std::byte> to) {
  enqueue([this, from, buffer = keep(from), to] {
    inner().download(from, to);
    inner().wait();
  });
}

void DeferredDevice::copy(const runtime::BufferRange& from, const runtime::BufferRange& to) {
  enqueue([this, from, to, source = keep(from), target = keep(to)] { inner().copy(from, to); });
}

void DeferredDevice::submit(runtime::DeviceProgram& program, runtime::LaunchTimes* times,
                            const runtime::LaunchProgress* progress) {
  enqueue([this, &program, times, progress] { inner().submit(program, times, progress); });
}

void DeferredDevice::wait() {
  while (!poll()) {
  }
}

bool DeferredDevice::poll() {
  if (!queue_.empty()) {
    const std::function<void()> operation = std::move(queue_.front());
    queue_.pop_front();
    operation();
  }
  if (!queue_.empty()) return false;
  inner().wait();
  return true;
}

}  // namespace websd::test
