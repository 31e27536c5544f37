// Reader of the safetensors format: 8-byte little-endian header length, a JSON header mapping
// tensor names to {dtype, shape, data_offsets}, then the raw little-endian data. The file is
// memory-mapped and never copied; opening reads only the header, so tensor data pages are touched
// only when a tensor is read. A header that lies (offsets out of range or overlapping, sizes that
// disagree with shape x dtype, absurd lengths, non-UTF-8 text, duplicate keys, nesting deeper than
// any real header) is rejected with a websd::Error naming the file and tensor, so a hostile file
// cannot crash the reader. The one thing it cannot guard against is the file shrinking on disk
// while mapped (the kernel then raises SIGBUS on access), as with any mmap reader.
// Thread-safety: immutable after construction; concurrent reads are safe.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/host_tensor.h"
#include "io/mapped_file.h"

namespace websd {

struct SafetensorsEntry {
  std::string name;
  DType dtype;
  Shape shape;
  std::uint64_t begin = 0;  // byte offsets inside the data section
  std::uint64_t end = 0;

  std::uint64_t byte_size() const { return end - begin; }
  // Number of elements (fits: it was checked against the file size).
  std::uint64_t numel() const;
};

class SafetensorsFile {
 public:
  // Headers larger than this are refused before any allocation (real ones are < 1 MiB).
  static constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;
  // A real header nests three levels (object, entry, shape); deeper input is refused while parsing
  // so that nothing downstream recurses on attacker-controlled depth.
  static constexpr int kMaxHeaderDepth = 16;
  // Far above any real tensor's rank; keeps a hostile shape from allocating unbounded memory.
  static constexpr std::size_t kMaxRank = 64;

  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  std::uint64_t file_size() const { return file_.size(); }
  // Entries in the order of their data offsets.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // nullptr if absent.
  const SafetensorsEntry* find(std::string_view name) const;
  // Throws websd::Error naming the file if absent.
  const SafetensorsEntry& at(std::string_view name) const;

  std::span<const std::byte> bytes(const SafetensorsEntry& entry) const;
  // Float tensors of any float dtype, upcast to float32.
  HostTensor read_f32(std::string_view name) const;
  void read_f32_into(const SafetensorsEntry& entry, std::span<float> out) const;
  // Elements [first, first + out.size()) of a float tensor, upcast: lets a caller stream a large
  // tensor through a small buffer. Throws websd::Error if the range is out of bounds.
  void read_f32_slice(const SafetensorsEntry& entry, std::uint64_t first, std::span<float> out) const;
  // Integer tensors (I64/I32/I16/I8/U8), widened to int64.
  std::vector<std::int64_t> read_i64(std::string_view name) const;
  // Drops this process's resident pages of the tensor's data (advisory: a later read faults them
  // back in from the file). Lets a caller that streams a whole checkpoint keep its memory bounded.
  void release_pages(const SafetensorsEntry& entry) const noexcept;
  // The same for data-section bytes [begin, end) (offsets as in SafetensorsEntry; clamped). A
  // fault may map cached neighbours again (Linux maps whole page-cache folios, up to 2 MiB, around
  // a fault), so a streaming reader releases a little behind its read position too.
  void release_data_pages(std::uint64_t begin, std::uint64_t end) const noexcept;

 private:
  void parse_header();

  MappedFile file_;
  std::uint64_t data_start_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// A tensor name (or any text taken from a file) made safe for a one-line error message: quoted,
// control characters escaped, names longer than 160 bytes shortened with "...".
std::string safetensors_quote_name(std::string_view name);

}  // namespace websd
