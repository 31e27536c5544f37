#include "io/safetensors_writer.h"

#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "io/atomic_file.h"

namespace websd {

namespace {

// The padded JSON header for `tensors` laid out back to back in order; checks names are unique.
// Entries are serialised one by one (an ordered_json object looks keys up linearly: quadratic).
std::string build_header(const std::string& path, const std::vector<SafetensorsTensorSpec>& tensors,
                         const std::map<std::string, std::string>& metadata) {
  std::string header_text = "{";
  if (!metadata.empty()) header_text += "\"__metadata__\":" + nlohmann::json(metadata).dump();
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& tensor : tensors) {
    if (!names.insert(tensor.name).second)
      throw Error("safetensors", path + ": duplicate tensor '" + tensor.name + "'");
    const auto size = static_cast<std::uint64_t>(shape_numel(tensor.shape)) * dtype_size(tensor.dtype);
    const nlohmann::ordered_json entry = {{"dtype", std::string(dtype_name(tensor.dtype))},
                                          {"shape", tensor.shape},
                                          {"data_offsets", {offset, offset + size}}};
    if (header_text.size() > 1) header_text += ',';
    header_text += nlohmann::json(tensor.name).dump() + ":" + entry.dump();
    offset += size;
  }
  header_text += "}";
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  return header_text;
}

void write_header(std::ostream& out, const std::string& header_text) {
  const std::uint64_t length = header_text.size();
  char length_bytes[8];
  for (int i = 0; i < 8; ++i) length_bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  out.write(length_bytes, 8);
  out.write(header_text.data(), static_cast<std::streamsize>(header_text.size()));
}

}  // namespace

void safetensors_write(const std::string& path, const std::vector<SafetensorsTensorView>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<SafetensorsTensorSpec> specs;
  for (const auto& tensor : tensors) {
    const auto expected = static_cast<std::uint64_t>(shape_numel(tensor.shape)) * dtype_size(tensor.dtype);
    if (tensor.bytes.size() != expected) {
      throw Error("safetensors", path + ": tensor '" + tensor.name + "' has " + std::to_string(tensor.bytes.size()) +
                                     " bytes, shape " + shape_to_string(tensor.shape) + " needs " +
                                     std::to_string(expected));
    }
    specs.push_back({tensor.name, tensor.dtype, tensor.shape});
  }
  const std::string header_text = build_header(path, specs, metadata);
  atomic_write_file(path, [&](std::ostream& out) {
    write_header(out, header_text);
    for (const auto& tensor : tensors) {
      out.write(reinterpret_cast<const char*>(tensor.bytes.data()), static_cast<std::streamsize>(tensor.bytes.size()));
    }
  });
}

void safetensors_write_streamed(const std::string& path, const std::vector<SafetensorsTensorSpec>& tensors,
                                const SafetensorsFill& fill, const std::map<std::string, std::string>& metadata) {
  const std::string header_text = build_header(path, tensors, metadata);
  atomic_write_file(path, [&](std::ostream& out) {
    write_header(out, header_text);
    std::vector<std::byte> buffer;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const auto size = static_cast<std::size_t>(shape_numel(tensors[i].shape)) * dtype_size(tensors[i].dtype);
      buffer.assign(size, std::byte{0});
      fill(i, std::span<std::byte>(buffer));
      out.write(reinterpret_cast<const char*>(buffer.data()), static_cast<std::streamsize>(buffer.size()));
      if (!out) throw Error("safetensors", path + ": write failed at tensor '" + tensors[i].name + "' (disk full?)");
    }
  });
}

void safetensors_write_f32(const std::string& path, const std::map<std::string, const HostTensor*>& tensors,
                           const std::map<std::string, std::string>& metadata) {
  std::vector<SafetensorsTensorView> views;
  for (const auto& [name, tensor] : tensors) {
    views.push_back({name, DType::kF32, tensor->shape, std::as_bytes(std::span<const float>(tensor->data))});
  }
  safetensors_write(path, views, metadata);
}

}  // namespace websd
