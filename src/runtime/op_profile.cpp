#include "runtime/op_profile.h"

namespace websd::runtime {

double kernel_flops(const std::string& op, const std::vector<const Shape*>& inputs, std::int64_t output_numel) {
  const double out = static_cast<double>(output_numel);
  // A launch list may come from an edited artifact: count only operands of the expected ranks.
  const auto has_rank = [&](std::size_t i, std::size_t rank) { return i < inputs.size() && inputs[i]->size() >= rank; };
  if ((op == "conv2d" || op == "conv2d_nhwc") && has_rank(1, 4)) {
    const Shape& w = *inputs[1];
    return 2.0 * out * static_cast<double>(w[1] * w[2] * w[3]);
  }
  if (op == "linear" && has_rank(1, 2)) return 2.0 * out * static_cast<double>((*inputs[1])[1]);
  if (op == "matmul" && has_rank(0, 1)) return 2.0 * out * static_cast<double>(inputs[0]->back());
  if (op == "attention" && has_rank(0, 4) && has_rank(2, 4)) {
    const Shape& q = *inputs[0];
    const Shape& v = *inputs[2];
    return 2.0 * static_cast<double>(q[0] * q[1] * q[2] * v[2]) * static_cast<double>(q[3] + v[3]);
  }
  return 0.0;
}

void OpProfile::add(const std::string& key, double seconds, double flops) {
  OpTotals& totals = by_op[key];
  totals.seconds += seconds;
  totals.calls += 1;
  totals.flops += flops;
}

double OpProfile::total_seconds() const {
  double total = 0;
  for (const auto& [name, totals] : by_op) total += totals.seconds;
  return total;
}

}  // namespace websd::runtime
