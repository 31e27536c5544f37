#include "pipeline/finite_check.h"

#include <cmath>

#include "core/error.h"

namespace websd {

void require_finite(const HostTensor& tensor, const std::string& what, const std::string& hint) {
  std::size_t count = 0, first = 0;
  for (std::size_t i = 0; i < tensor.data.size(); ++i) {
    if (!std::isfinite(tensor.data[i])) {
      if (count++ == 0) first = i;
    }
  }
  if (count == 0) return;
  throw Error("pipeline", what + " holds " + std::to_string(count) + " NaN or infinite values of " +
                              std::to_string(tensor.data.size()) + " (the first at index " + std::to_string(first) +
                              "); stopped instead of writing a broken image (" + hint + ")");
}

}  // namespace websd
