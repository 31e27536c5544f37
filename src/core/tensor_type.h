// The static type of a graph value: element type and fully known shape.
#pragma once

#include <string>

#include "core/dtype.h"
#include "core/host_tensor.h"

namespace websd {

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;

  std::int64_t rank() const { return static_cast<std::int64_t>(shape.size()); }
  std::int64_t numel() const { return shape_numel(shape); }
  bool operator==(const TensorType&) const = default;
  // "f32[2,77,768]"
  std::string to_string() const;
};

}  // namespace websd
