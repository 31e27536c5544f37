#include "core/host_tensor.h"

#include <limits>

#include "core/error.h"

namespace websd {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) throw Error("tensor", "negative dimension in shape " + shape_to_string(shape));
    if (dim != 0 && count > std::numeric_limits<std::int64_t>::max() / dim) {
      throw Error("tensor", "shape " + shape_to_string(shape) + " has more elements than fit in 64 bits");
    }
    count *= dim;
  }
  return count;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

HostTensor::HostTensor(Shape tensor_shape)
    : shape(std::move(tensor_shape)), data(static_cast<std::size_t>(shape_numel(shape)), 0.0f) {}

HostTensor::HostTensor(Shape tensor_shape, std::vector<float> values)
    : shape(std::move(tensor_shape)), data(std::move(values)) {
  if (static_cast<std::int64_t>(data.size()) != shape_numel(shape)) {
    throw Error("tensor", "shape " + shape_to_string(shape) + " needs " + std::to_string(shape_numel(shape)) +
                              " values, got " + std::to_string(data.size()));
  }
}

}  // namespace websd
