#include "runtime/buffer_cache.h"

namespace websd::runtime {

BufferCache::BufferCache(Device& device) : device_(device) {}

BufferCache::~BufferCache() = default;

BufferPtr BufferCache::acquire(std::uint64_t bytes) {
  BufferPtr buffer;
  if (const auto found = free_->buffers.find(bytes); found != free_->buffers.end()) {
    buffer = std::move(found->second);
    free_->buffers.erase(found);
  } else {
    buffer = device_.allocate(bytes);
    allocations_ += 1;
  }
  // The handle shares the buffer's address; dropping it puts the buffer back on the free list,
  // unless the cache has gone (then the buffer is freed with the deleter).
  DeviceBuffer* address = buffer.get();
  return BufferPtr(address, [free = std::weak_ptr<FreeList>(free_), buffer = std::move(buffer)](DeviceBuffer*) mutable {
    if (const std::shared_ptr<FreeList> list = free.lock()) {
      const std::uint64_t size = buffer->bytes();
      list->buffers.emplace(size, std::move(buffer));
    }
  });
}

void BufferCache::clear() { free_->buffers.clear(); }

std::size_t BufferCache::free_count() const { return free_->buffers.size(); }

}  // namespace websd::runtime
