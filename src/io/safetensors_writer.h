// Writer of safetensors files: tensors are laid out in the given order, 8-byte aligned header,
// written atomically (temporary file + rename) so a failure never leaves a partial file.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/host_tensor.h"

namespace websd {

struct SafetensorsTensorView {
  std::string name;
  DType dtype;
  Shape shape;
  std::span<const std::byte> bytes;  // little-endian, exactly numel x dtype_size bytes
};

// Throws websd::Error on a size mismatch, duplicate name or I/O failure.
void safetensors_write(const std::string& path, const std::vector<SafetensorsTensorView>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

struct SafetensorsTensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

// Produces the bytes of tensor `index` into `bytes` (exactly numel x dtype_size, zero-filled on entry).
using SafetensorsFill = std::function<void(std::size_t index, std::span<std::byte> bytes)>;

// Streams the tensors into the file one at a time, asking `fill` for each in order: only one tensor's
// bytes are in memory at once, so multi-gigabyte checkpoints are written with bounded memory. Same
// layout, checks and atomicity as safetensors_write; exceptions from `fill` propagate.
void safetensors_write_streamed(const std::string& path, const std::vector<SafetensorsTensorSpec>& tensors,
                                const SafetensorsFill& fill, const std::map<std::string, std::string>& metadata = {});

// Convenience: float32 tensors by name.
void safetensors_write_f32(const std::string& path, const std::map<std::string, const HostTensor*>& tensors,
                           const std::map<std::string, std::string>& metadata = {});

}  // namespace websd
