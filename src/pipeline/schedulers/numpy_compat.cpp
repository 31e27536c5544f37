#include "pipeline/schedulers/numpy_compat.h"

#include <cmath>
#include <cstddef>

namespace websd::schedulers {

std::vector<double> numpy_linspace(double start, double stop, int num, bool endpoint) {
  std::vector<double> values;
  if (num <= 0) return values;
  const int div = endpoint ? num - 1 : num;
  values.resize(static_cast<std::size_t>(num));
  if (div == 0) {
    values[0] = start;
    return values;
  }
  const double step = (stop - start) / div;
  for (int i = 0; i < num; ++i) values[static_cast<std::size_t>(i)] = i * step + start;
  if (endpoint && num > 1) values.back() = stop;
  return values;
}

std::vector<double> numpy_arange(double start, double stop, double step) {
  std::vector<double> values;
  const double length = std::ceil((stop - start) / step);
  if (!(length > 0)) return values;
  const auto count = static_cast<std::size_t>(length);
  values.resize(count);
  values[0] = start;
  if (count > 1) {
    const double second = start + step;
    const double delta = second - start;
    values[1] = second;
    for (std::size_t i = 2; i < count; ++i) values[i] = start + static_cast<double>(i) * delta;
  }
  return values;
}

double numpy_round(double value) { return std::nearbyint(value); }

double numpy_interp_index(double x, const std::vector<float>& fp) {
  const auto size = static_cast<double>(fp.size());
  if (std::isnan(x)) return x;
  if (x <= 0.0) return fp.front();
  if (x >= size - 1.0) return fp.back();
  const auto j = static_cast<std::size_t>(std::floor(x));
  const double left = fp[j];
  if (static_cast<double>(j) == x) return left;
  const double right = fp[j + 1];
  // numpy: slope * (x - xp[j]) + fp[j], with xp[j+1] - xp[j] == 1.
  return (right - left) * (x - static_cast<double>(j)) + left;
}

}  // namespace websd::schedulers
