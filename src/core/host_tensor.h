// A float32 tensor in host memory, the currency of the pipeline's own math (schedulers, noise,
// guidance). Value type: copies are deep; not synchronised, so share across threads read-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace websd {

using Shape = std::vector<std::int64_t>;

// Number of elements of `shape`; throws websd::Error on a negative dimension or overflow.
std::int64_t shape_numel(const Shape& shape);
// "[1,4,64,64]"
std::string shape_to_string(const Shape& shape);

struct HostTensor {
  Shape shape;
  std::vector<float> data;

  HostTensor() = default;
  // Zero-filled tensor of `shape`.
  explicit HostTensor(Shape tensor_shape);
  HostTensor(Shape tensor_shape, std::vector<float> values);

  std::int64_t numel() const { return static_cast<std::int64_t>(data.size()); }
};

}  // namespace websd
