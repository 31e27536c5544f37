#include "graph/tensor_type.h"

#include <cctype>

namespace websd::graph {

std::string TensorType::to_string() const {
  std::string name(dtype_name(dtype));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name + shape_to_string(shape);
}

}  // namespace websd::graph
