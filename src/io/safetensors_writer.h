// Writer of safetensors files: tensors are laid out in the given order, 8-byte aligned header,
// written atomically (temporary file + rename) so a failure never leaves a partial file.
#pragma once

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

// Convenience: float32 tensors by name.
void safetensors_write_f32(const std::string& path, const std::map<std::string, const HostTensor*>& tensors,
                           const std::map<std::string, std::string>& metadata = {});

}  // namespace websd
