#include "cpu/op_profile.h"

#include "graph/op_registry.h"

namespace websd::cpu {

double kernel_flops(const std::string& op, const std::vector<const Shape*>& inputs, std::int64_t output_numel) {
  const double out = static_cast<double>(output_numel);
  if (op == "conv2d" || op == "conv2d_nhwc") {
    const Shape& w = *inputs[1];
    return 2.0 * out * static_cast<double>(w[1] * w[2] * w[3]);
  }
  if (op == "linear") return 2.0 * out * static_cast<double>((*inputs[1])[1]);
  if (op == "matmul") return 2.0 * out * static_cast<double>(inputs[0]->back());
  if (op == "attention") {
    const Shape& q = *inputs[0];
    const Shape& v = *inputs[2];
    return 2.0 * static_cast<double>(q[0] * q[1] * q[2] * v[2]) * static_cast<double>(q[3] + v[3]);
  }
  return 0.0;
}

void OpProfile::add(const graph::Function& function, const graph::Node& node, double seconds) {
  std::vector<const Shape*> shapes;
  for (const auto input : node.inputs) shapes.push_back(&function.value(input).type.shape);
  add(node.op->name, seconds, kernel_flops(node.op->name, shapes, function.value(node.outputs[0]).type.numel()));
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

}  // namespace websd::cpu
