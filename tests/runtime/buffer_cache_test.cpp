// runtime::BufferCache (runtime/buffer_cache.h): a dropped buffer is handed out again for the same
// size and allocated anew for another; clear() frees the free list; a buffer dropped after its
// cache is freed; work queued on a buffer before it was dropped still sees the old bytes on a
// device that defers it (reuse relies on the device's call order).
#include "runtime/buffer_cache.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "support/deferred_device.h"
#include "targets/device_registry.h"

namespace websd::runtime {
namespace {

TEST(BufferCache, HandsADroppedBufferOutAgainForTheSameSize) {
  const std::unique_ptr<Device> device = targets::open_device("cpu");
  BufferCache cache(*device);
  const DeviceBuffer* first = nullptr;
  {
    const BufferPtr buffer = cache.acquire(64);
    first = buffer.get();
    EXPECT_EQ(buffer->bytes(), 64u);
    EXPECT_EQ(cache.free_count(), 0u);
  }
  EXPECT_EQ(cache.free_count(), 1u);
  const BufferPtr again = cache.acquire(64);
  EXPECT_EQ(again.get(), first);
  const BufferPtr other = cache.acquire(128);
  EXPECT_NE(other.get(), first);
  EXPECT_EQ(cache.allocations(), 2u);
  const BufferPtr second = cache.acquire(64);  // the first is in use: a new one
  EXPECT_EQ(cache.allocations(), 3u);
}

TEST(BufferCache, ClearFreesTheFreeListAndABufferMayOutliveItsCache) {
  const std::unique_ptr<Device> device = targets::open_device("cpu");
  BufferPtr survivor;
  {
    BufferCache cache(*device);
    cache.acquire(32);
    EXPECT_EQ(cache.free_count(), 1u);
    cache.clear();
    EXPECT_EQ(cache.free_count(), 0u);
    survivor = cache.acquire(32);
    EXPECT_EQ(cache.allocations(), 2u);
  }
  EXPECT_EQ(survivor->bytes(), 32u);  // still usable; freed when dropped
}

TEST(BufferCache, WorkQueuedBeforeABufferWasDroppedRunsBeforeItsNextUse) {
  test::DeferredDevice device;
  BufferCache cache(device);
  const std::vector<float> first = {1, 2, 3, 4}, second = {5, 6, 7, 8};
  std::vector<float> read(4, 0.0f);
  const DeviceBuffer* address = nullptr;
  {
    const BufferPtr buffer = cache.acquire(16);
    address = buffer.get();
    device.upload({buffer.get(), 0, 16}, std::as_bytes(std::span<const float>(first)));
    device.download({buffer.get(), 0, 16}, std::as_writable_bytes(std::span<float>(read)));
  }
  const BufferPtr reused = cache.acquire(16);
  EXPECT_EQ(reused.get(), address);
  device.upload({reused.get(), 0, 16}, std::as_bytes(std::span<const float>(second)));
  device.wait();
  EXPECT_EQ(read, first);
}

}  // namespace
}  // namespace websd::runtime
