// Device buffers used again instead of allocated again: a buffer handed out by acquire() goes back
// to a free list, keyed by its size, when the last holder drops it, and the next acquire() of that
// size takes it. A backend makes the same few sizes every step (the scheduler's input, the UNet's
// prediction), so after the first step a denoising step allocates nothing on the device.
//
// Reuse is safe on a device that runs its work in call order (runtime/device.h): work enqueued on
// a buffer before it was dropped runs before work enqueued on it after it was handed out again.
// Ownership: the cache borrows the device (which must outlive it and every buffer it handed out);
// a buffer dropped after the cache is destroyed is freed. Not thread-safe (as Device).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

#include "runtime/device.h"

namespace websd::runtime {

class BufferCache {
 public:
  explicit BufferCache(Device& device);
  ~BufferCache();
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // A buffer of exactly `bytes`, from the free list or allocated; it returns to the free list when
  // its last holder drops it. Throws as Device::allocate.
  BufferPtr acquire(std::uint64_t bytes);
  // Frees every buffer on the free list (those in use return to it later).
  void clear();

  // Buffers on the free list, and device allocations made so far: for tests and memory reports.
  std::size_t free_count() const;
  std::size_t allocations() const { return allocations_; }

 private:
  struct FreeList {
    std::multimap<std::uint64_t, BufferPtr> buffers;  // by size
  };

  Device& device_;
  std::shared_ptr<FreeList> free_ = std::make_shared<FreeList>();  // shared with the handed-out buffers
  std::size_t allocations_ = 0;
};

}  // namespace websd::runtime
