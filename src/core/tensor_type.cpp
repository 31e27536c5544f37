#include "core/tensor_type.h"

namespace websd {

std::string TensorType::to_string() const { return dtype_lower_name(dtype) + shape_to_string(shape); }

}  // namespace websd
