// A read-only memory mapping of a whole file. Move-only; the mapping lives as long as the
// object. Reading through data() is thread-safe. Pages are loaded lazily by the kernel, so opening
// a multi-gigabyte checkpoint costs address space, not resident memory.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "io/input_file.h"

namespace websd {

class MappedFile {
 public:
  // Opens `path` under the input rule (io/input_file.h: a regular file within the kind's cap, a FIFO
  // refused without blocking). Throws websd::Error naming the path and the cause if the file cannot
  // be opened or mapped.
  MappedFile(const std::string& path, const InputKind& kind);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  // Drops this process's resident pages that overlap [offset, offset + length): they stop
  // counting towards resident memory and are read again from the file if touched, so the data
  // seen through bytes() never changes. Advisory, never fails (a no-op where the platform has no
  // madvise); the range is clamped to the file. Safe while other threads read the mapping.
  void release_pages(std::size_t offset, std::size_t length) const noexcept;

 private:
  void release() noexcept;

  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace websd
