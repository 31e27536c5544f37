#include "models/graphs/graph_sizes.h"

#include "core/error.h"

namespace websd::graph_sizes {

void require_positive(const std::string& component, const std::string& function, const std::string& what,
                      std::int64_t value) {
  if (value < 1) throw Error(component, function + ": " + what + " = " + std::to_string(value) + " must be >= 1");
}

std::int64_t level_factor(std::size_t levels) { return std::int64_t{1} << (levels - 1); }

void require_spatial(const std::string& component, const std::string& function, const std::string& what,
                     std::int64_t height, std::int64_t width, std::size_t levels) {
  require_positive(component, function, what + " height", height);
  require_positive(component, function, what + " width", width);
  const std::int64_t factor = level_factor(levels);
  if (height % factor != 0 || width % factor != 0) {
    throw Error(component, function + ": " + what + " size " + std::to_string(height) + "x" + std::to_string(width) +
                               " is not divisible by " + std::to_string(factor) + " (2^(blocks-1) for " +
                               std::to_string(levels) + " blocks; round it to a multiple of " + std::to_string(factor) +
                               ")");
  }
}

}  // namespace websd::graph_sizes
