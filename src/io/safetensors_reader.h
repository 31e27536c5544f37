// Reader of the safetensors format: 8-byte little-endian header length, a JSON header mapping
// tensor names to {dtype, shape, data_offsets}, then the raw little-endian data. The file is
// memory-mapped and never copied; a header that lies (offsets out of range or overlapping, sizes
// that disagree with shape x dtype, absurd lengths, non-UTF-8 names) is rejected with a websd::Error
// naming the file and tensor, so a hostile file cannot crash the reader.
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
};

class SafetensorsFile {
 public:
  // Headers larger than this are refused before any allocation (real ones are < 1 MiB).
  static constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;

  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
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
  // Integer tensors (I64/I32/I16/I8/U8), widened to int64.
  std::vector<std::int64_t> read_i64(std::string_view name) const;

 private:
  void parse_header();

  MappedFile file_;
  std::uint64_t data_start_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace websd
