#include "io/safetensors_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "io/json_file.h"

namespace websd {
namespace {

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::uint64_t read_u64_le(const std::byte* data) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint64_t>(data[i]);
  return value;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) { parse_header(); }

void SafetensorsFile::parse_header() {
  const std::string& where = file_.path();
  const auto fail = [&](const std::string& what) { throw Error("safetensors", where + ": " + what); };
  const std::uint64_t file_size = file_.size();
  if (file_size < 8) fail("file is " + std::to_string(file_size) + " bytes, too short to hold a header length");
  const std::uint64_t header_len = read_u64_le(file_.bytes().data());
  if (header_len > file_size - 8) {
    fail("header length " + std::to_string(header_len) + " exceeds file size " + human_bytes(file_size) +
         " (truncated or not a safetensors file)");
  }
  if (header_len > kMaxHeaderBytes) fail("header length " + human_bytes(header_len) + " exceeds the 100 MiB limit");
  data_start_ = 8 + header_len;
  const std::uint64_t data_size = file_size - data_start_;

  const auto* header_chars = reinterpret_cast<const char*>(file_.bytes().data() + 8);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_chars, header_chars + header_len);
  } catch (const nlohmann::json::exception& error) {
    fail(std::string("header is not valid JSON: ") + error.what());
  }
  if (!header.is_object()) fail("header is not a JSON object");

  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) fail("__metadata__ is not an object");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) fail("__metadata__ value of '" + key + "' is not a string");
        metadata_[key] = text.get<std::string>();
      }
      continue;
    }
    const auto bad = [&](const std::string& what) { fail("tensor '" + name + "': " + what); };
    if (!value.is_object()) bad("entry is not an object");
    const auto dtype_it = value.find("dtype");
    const auto shape_it = value.find("shape");
    const auto offsets_it = value.find("data_offsets");
    if (dtype_it == value.end() || !dtype_it->is_string()) bad("missing string 'dtype'");
    if (shape_it == value.end() || !shape_it->is_array()) bad("missing array 'shape'");
    if (offsets_it == value.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
      bad("missing 'data_offsets' [begin, end]");
    }
    SafetensorsEntry entry;
    entry.name = name;
    const auto dtype_text = dtype_it->get<std::string>();
    const auto dtype = dtype_from_name(dtype_text);
    if (!dtype) bad("unsupported dtype '" + dtype_text + "' (supported: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL)");
    entry.dtype = *dtype;
    std::uint64_t numel = 1;
    bool overflow = false;
    for (const auto& dim : *shape_it) {
      if (!dim.is_number_unsigned()) bad("shape " + shape_it->dump() + " holds a non-negative-integer dimension");
      const auto extent = dim.get<std::uint64_t>();
      if (extent > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) overflow = true;
      entry.shape.push_back(static_cast<std::int64_t>(extent));
      if (extent != 0 && numel > std::numeric_limits<std::uint64_t>::max() / extent) overflow = true;
      numel *= extent;
    }
    const std::uint64_t element_size = dtype_size(entry.dtype);
    if (overflow || numel > std::numeric_limits<std::uint64_t>::max() / element_size) {
      bad("shape " + shape_it->dump() + " is too large");
    }
    for (const auto& offset : *offsets_it) {
      if (!offset.is_number_unsigned()) bad("data_offsets " + offsets_it->dump() + " are not non-negative integers");
    }
    entry.begin = (*offsets_it)[0].get<std::uint64_t>();
    entry.end = (*offsets_it)[1].get<std::uint64_t>();
    if (entry.begin > entry.end) bad("data_offsets " + offsets_it->dump() + " end before they begin");
    if (entry.end > data_size) {
      bad("data_offsets end at " + std::to_string(entry.end) + " but the data section holds " +
          std::to_string(data_size) + " bytes (truncated file?)");
    }
    if (entry.end - entry.begin != numel * element_size) {
      bad("holds " + std::to_string(entry.end - entry.begin) + " bytes but shape " + shape_it->dump() + " of " +
          dtype_text + " needs " + std::to_string(numel * element_size));
    }
    entries_.push_back(std::move(entry));
  }

  std::sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i > 0 && entries_[i].begin < entries_[i - 1].end) {
      fail("tensors '" + entries_[i - 1].name + "' and '" + entries_[i].name + "' overlap in the data section");
    }
    index_.emplace(entries_[i].name, i);
  }
}

const SafetensorsEntry* SafetensorsFile::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const SafetensorsEntry& SafetensorsFile::at(std::string_view name) const {
  const auto* entry = find(name);
  if (entry == nullptr) throw Error("safetensors", path() + ": no tensor named '" + std::string(name) + "'");
  return *entry;
}

std::span<const std::byte> SafetensorsFile::bytes(const SafetensorsEntry& entry) const {
  return file_.bytes().subspan(data_start_ + entry.begin, entry.end - entry.begin);
}

HostTensor SafetensorsFile::read_f32(std::string_view name) const {
  const auto& entry = at(name);
  HostTensor tensor(entry.shape);
  read_f32_into(entry, tensor.data);
  return tensor;
}

void SafetensorsFile::read_f32_into(const SafetensorsEntry& entry, std::span<float> out) const {
  if (!dtype_is_float(entry.dtype)) {
    throw Error("safetensors", path() + ": tensor '" + entry.name + "' is " + std::string(dtype_name(entry.dtype)) +
                                   ", expected a float type");
  }
  const std::size_t count = (entry.end - entry.begin) / dtype_size(entry.dtype);
  if (out.size() != count) {
    throw Error("safetensors", path() + ": tensor '" + entry.name + "' has " + std::to_string(count) +
                                   " elements, destination holds " + std::to_string(out.size()));
  }
  convert_to_f32(bytes(entry).data(), entry.dtype, count, out.data());
}

std::vector<std::int64_t> SafetensorsFile::read_i64(std::string_view name) const {
  const auto& entry = at(name);
  const auto raw = bytes(entry);
  const std::size_t size = dtype_size(entry.dtype);
  const std::size_t count = raw.size() / size;
  std::vector<std::int64_t> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* element = raw.data() + i * size;
    switch (entry.dtype) {
      case DType::kI64: { std::int64_t v; std::memcpy(&v, element, 8); values[i] = v; break; }
      case DType::kI32: { std::int32_t v; std::memcpy(&v, element, 4); values[i] = v; break; }
      case DType::kI16: { std::int16_t v; std::memcpy(&v, element, 2); values[i] = v; break; }
      case DType::kI8: values[i] = static_cast<std::int8_t>(std::to_integer<int>(*element)); break;
      case DType::kU8: values[i] = std::to_integer<int>(*element); break;
      default:
        throw Error("safetensors", path() + ": tensor '" + entry.name + "' is " +
                                       std::string(dtype_name(entry.dtype)) + ", expected an integer type");
    }
  }
  return values;
}

}  // namespace websd
