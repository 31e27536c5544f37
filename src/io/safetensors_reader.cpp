#include "io/safetensors_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/byte_size_text.h"
#include "core/error.h"
#include "core/message_text.h"
#include "core/utf8.h"

namespace websd {
namespace {

std::uint64_t read_u64_le(const std::byte* data) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint64_t>(data[i]);
  return value;
}

// What a JSON value is, for messages, without serialising it (which would recurse on its depth
// and could print megabytes).
std::string describe(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number_float()) return "the non-integer " + std::to_string(value.get<double>());
  return std::string("a JSON ") + value.type_name();
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error("safetensors", path + ": " + what);
}

// Streams the header through nlohmann's SAX interface: each top-level value (one tensor entry or
// __metadata__) is built alone and handed to `on_value`, so time and memory are linear in the header
// (nlohmann's callback parser rescans the parent object at every nested object's end: quadratic in
// the tensor count). Refuses nesting deeper than kMaxHeaderDepth while parsing, so nothing recurses
// on attacker-controlled depth, and duplicate keys, which nlohmann's DOM would keep silently (the
// last one wins), letting two different tensors hide behind one name.
class HeaderParser {
 public:
  using Json = nlohmann::json;
  using OnValue = std::function<void(const std::string& key, const Json& value)>;

  HeaderParser(const std::string& path, OnValue on_value) : path_(path), on_value_(std::move(on_value)) {}

  bool null() {
    return value([](auto& dom) { return dom.null(); }, Json());
  }
  bool boolean(bool v) {
    return value([v](auto& dom) { return dom.boolean(v); }, Json(v));
  }
  bool number_integer(Json::number_integer_t v) {
    return value([v](auto& dom) { return dom.number_integer(v); }, Json(v));
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return value([v](auto& dom) { return dom.number_unsigned(v); }, Json(v));
  }
  bool number_float(Json::number_float_t v, const Json::string_t& text) {
    return value([v, &text](auto& dom) { return dom.number_float(v, text); }, Json(v));
  }
  bool string(Json::string_t& v) {
    return value([&v](auto& dom) { return dom.string(v); }, Json(v));
  }
  bool binary(Json::binary_t& v) {
    return value([&v](auto& dom) { return dom.binary(v); }, Json(v));
  }

  bool start_object(std::size_t size) {
    open("object");
    keys_.emplace_back();
    return depth_ == 1 || sub().start_object(size);
  }
  bool key(Json::string_t& name) {
    if (!keys_.back().insert(name).second) {
      fail(path_, "header holds the key " + safetensors_quote_name(name) +
                      (depth_ == 1 ? " twice (duplicate tensor names)" : " twice inside one object"));
    }
    if (depth_ == 1) {
      key_ = name;
      return true;
    }
    return sub().key(name);
  }
  bool end_object() {
    keys_.pop_back();
    return close([](auto& dom) { return dom.end_object(); });
  }
  bool start_array(std::size_t size) {
    open("array");
    return sub().start_array(size);
  }
  bool end_array() {
    return close([](auto& dom) { return dom.end_array(); });
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) {
    std::string reason = error.what();
    if (const auto start = reason.find("] "); start != std::string::npos) reason.erase(0, start + 2);
    fail(path_, "header is not valid JSON: " + safetensors_quote_name(reason));
  }

 private:
  using Dom = nlohmann::detail::json_sax_dom_parser<Json>;

  Dom& sub() {
    if (!dom_) dom_.emplace(value_, true);
    return *dom_;
  }

  void open(const char* what) {
    if (depth_ == 0 && std::string(what) != "object") fail(path_, "header is a JSON array, expected a JSON object");
    if (depth_ >= SafetensorsFile::kMaxHeaderDepth) {
      fail(path_, "header nests deeper than " + std::to_string(SafetensorsFile::kMaxHeaderDepth) +
                      " levels (not a safetensors header)");
    }
    ++depth_;
  }

  template <typename Event>
  bool close(const Event& event) {
    --depth_;
    if (depth_ == 0) return true;  // the header object itself
    const bool ok = event(sub());
    if (depth_ == 1) finish();
    return ok;
  }

  // A scalar: a whole top-level value, part of one, or (outside any object) the whole header.
  template <typename Event>
  bool value(const Event& event, const Json& scalar) {
    if (depth_ == 0) fail(path_, "header is " + describe(scalar) + ", expected a JSON object");
    if (depth_ > 1) return event(sub());
    on_value_(key_, scalar);
    return true;
  }

  void finish() {
    dom_.reset();
    on_value_(key_, value_);
    value_ = Json();
  }

  const std::string& path_;
  OnValue on_value_;
  int depth_ = 0;
  std::vector<std::set<std::string, std::less<>>> keys_;  // keys seen, per open object
  std::string key_;                                       // of the top-level value being read
  Json value_;
  std::optional<Dom> dom_;
};

std::map<std::string, std::string> parse_metadata(const std::string& path, const nlohmann::json& value) {
  if (!value.is_object()) fail(path, "__metadata__ is " + describe(value) + ", expected an object of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) {
      fail(path,
           "__metadata__ value of " + safetensors_quote_name(key) + " is " + describe(text) + ", expected a string");
    }
    metadata[key] = text.get<std::string>();
  }
  return metadata;
}

// One tensor's {dtype, shape, data_offsets}, checked against itself and the data section size.
SafetensorsEntry parse_entry(const std::string& path, const std::string& name, const nlohmann::json& value,
                             std::uint64_t data_size) {
  const auto bad = [&](const std::string& what) { fail(path, "tensor " + safetensors_quote_name(name) + ": " + what); };
  if (!value.is_object()) bad("entry is " + describe(value) + ", expected {dtype, shape, data_offsets}");
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
  const auto& dtype_text = dtype_it->get_ref<const std::string&>();
  const auto dtype = dtype_from_name(dtype_text);
  if (!dtype) {
    bad("unsupported dtype " + safetensors_quote_name(dtype_text) +
        " (supported: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL)");
  }
  entry.dtype = *dtype;
  if (shape_it->size() > SafetensorsFile::kMaxRank) {
    bad("shape has " + std::to_string(shape_it->size()) + " dimensions, more than " +
        std::to_string(SafetensorsFile::kMaxRank));
  }
  std::uint64_t numel = 1;
  bool overflow = false;
  for (std::size_t axis = 0; axis < shape_it->size(); ++axis) {
    const auto& dim = (*shape_it)[axis];
    if (!dim.is_number_unsigned()) {
      bad("shape dimension " + std::to_string(axis) + " is " + describe(dim) + ", expected a non-negative integer");
    }
    const auto extent = dim.get<std::uint64_t>();
    if (extent > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) overflow = true;
    entry.shape.push_back(static_cast<std::int64_t>(extent));
    if (extent != 0 && numel > std::numeric_limits<std::uint64_t>::max() / extent) overflow = true;
    numel *= extent;
  }
  const std::uint64_t element_size = dtype_size(entry.dtype);
  if (overflow || numel > std::numeric_limits<std::uint64_t>::max() / element_size) {
    bad("shape " + shape_to_string(entry.shape) + " has more elements than fit in 64 bits");
  }
  for (const auto& offset : *offsets_it) {
    if (!offset.is_number_unsigned()) bad("data_offset " + describe(offset) + " is not a non-negative integer");
  }
  entry.begin = (*offsets_it)[0].get<std::uint64_t>();
  entry.end = (*offsets_it)[1].get<std::uint64_t>();
  const std::string offsets_text = "[" + std::to_string(entry.begin) + "," + std::to_string(entry.end) + "]";
  if (entry.begin > entry.end) bad("data_offsets " + offsets_text + " end before they begin");
  if (entry.end > data_size) {
    bad("data_offsets " + offsets_text + " end past the data section, which holds " + std::to_string(data_size) +
        " bytes (truncated file?)");
  }
  if (entry.end - entry.begin != numel * element_size) {
    bad("data_offsets " + offsets_text + " span " + std::to_string(entry.end - entry.begin) + " bytes but shape " +
        shape_to_string(entry.shape) + " of " + dtype_text + " needs " + std::to_string(numel * element_size));
  }
  return entry;
}

}  // namespace

std::string safetensors_quote_name(std::string_view name) { return message_quote(name, 160); }

std::uint64_t SafetensorsEntry::numel() const {
  std::uint64_t count = 1;
  for (const auto dim : shape) count *= static_cast<std::uint64_t>(dim);
  return count;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path, input_kinds::kSafetensors) { parse_header(); }

void SafetensorsFile::parse_header() {
  const std::string& path = file_.path();
  const std::uint64_t file_size = file_.size();
  if (file_size < 8) {
    fail(path, "file is " + std::to_string(file_size) +
                   " bytes, too short to hold a header length (truncated or not a safetensors file)");
  }
  const std::uint64_t header_len = read_u64_le(file_.bytes().data());
  if (header_len > file_size - 8) {
    fail(path, "header length " + std::to_string(header_len) + " exceeds file size " + human_bytes(file_size) +
                   " (truncated or not a safetensors file)");
  }
  if (header_len > kMaxHeaderBytes) {
    fail(path, "header length " + human_bytes(header_len) + " exceeds the 100 MiB limit");
  }
  data_start_ = 8 + header_len;
  const std::uint64_t data_size = file_size - data_start_;

  const std::string_view text(reinterpret_cast<const char*>(file_.bytes().data() + 8), header_len);
  if (const auto bad_byte = utf8_find_invalid(text); bad_byte != std::string_view::npos) {
    fail(path, "header is not valid UTF-8 at byte " + std::to_string(8 + bad_byte) +
                   " (tensor names and metadata must be UTF-8; the file is corrupt or not safetensors)");
  }
  HeaderParser parser(path, [&](const std::string& name, const nlohmann::json& value) {
    if (name == "__metadata__") {
      metadata_ = parse_metadata(path, value);
    } else {
      entries_.push_back(parse_entry(path, name, value, data_size));
    }
  });
  nlohmann::json::sax_parse(text.begin(), text.end(), &parser);
  std::sort(entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i > 0 && entries_[i].begin < entries_[i - 1].end) {
      fail(path, "tensors " + safetensors_quote_name(entries_[i - 1].name) + " and " +
                     safetensors_quote_name(entries_[i].name) + " overlap in the data section");
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
  if (entry == nullptr) throw Error("safetensors", path() + ": no tensor named " + safetensors_quote_name(name));
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
  if (out.size() != entry.numel()) {
    throw Error("safetensors", path() + ": tensor " + safetensors_quote_name(entry.name) + " has " +
                                   std::to_string(entry.numel()) + " elements, destination holds " +
                                   std::to_string(out.size()));
  }
  read_f32_slice(entry, 0, out);
}

void SafetensorsFile::read_f32_slice(const SafetensorsEntry& entry, std::uint64_t first, std::span<float> out) const {
  if (!dtype_is_float(entry.dtype)) {
    throw Error("safetensors", path() + ": tensor " + safetensors_quote_name(entry.name) + " is " +
                                   std::string(dtype_name(entry.dtype)) + ", expected a float type");
  }
  const std::uint64_t count = entry.numel();
  if (first > count || out.size() > count - first) {
    throw Error("safetensors", path() + ": tensor " + safetensors_quote_name(entry.name) + " has " +
                                   std::to_string(count) + " elements, cannot read " + std::to_string(out.size()) +
                                   " from element " + std::to_string(first));
  }
  if (out.empty()) return;  // an empty span may be null, and memcpy(nullptr, ..., 0) is undefined
  const std::size_t element_size = dtype_size(entry.dtype);
  convert_to_f32(bytes(entry).data() + first * element_size, entry.dtype, out.size(), out.data());
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
      case DType::kI64: {
        std::int64_t v;
        std::memcpy(&v, element, 8);
        values[i] = v;
        break;
      }
      case DType::kI32: {
        std::int32_t v;
        std::memcpy(&v, element, 4);
        values[i] = v;
        break;
      }
      case DType::kI16: {
        std::int16_t v;
        std::memcpy(&v, element, 2);
        values[i] = v;
        break;
      }
      case DType::kI8:
        values[i] = static_cast<std::int8_t>(std::to_integer<int>(*element));
        break;
      case DType::kU8:
        values[i] = std::to_integer<int>(*element);
        break;
      default:
        throw Error("safetensors", path() + ": tensor " + safetensors_quote_name(entry.name) + " is " +
                                       std::string(dtype_name(entry.dtype)) + ", expected an integer type");
    }
  }
  return values;
}

void SafetensorsFile::release_pages(const SafetensorsEntry& entry) const noexcept {
  release_data_pages(entry.begin, entry.end);
}

void SafetensorsFile::release_data_pages(std::uint64_t begin, std::uint64_t end) const noexcept {
  const std::uint64_t data_size = file_.size() - data_start_;
  end = std::min(end, data_size);
  if (begin >= end) return;
  file_.release_pages(data_start_ + begin, end - begin);
}

}  // namespace websd
