#include "cpu/op_profile.h"

#include "graph/op_registry.h"

namespace websd::cpu {
namespace {

// Floating-point operations of the GEMM-like ops (2 per multiply-add); 0 for the rest.
double node_flops(const graph::Function& function, const graph::Node& node) {
  const auto shape_of = [&](std::size_t input) -> const Shape& {
    return function.value(node.inputs[input]).type.shape;
  };
  const double out = static_cast<double>(function.value(node.outputs[0]).type.numel());
  const std::string& op = node.op->name;
  if (op == "conv2d" || op == "conv2d_nhwc") {
    const Shape& w = shape_of(1);
    return 2.0 * out * static_cast<double>(w[1] * w[2] * w[3]);
  }
  if (op == "linear") return 2.0 * out * static_cast<double>(shape_of(1)[1]);
  if (op == "matmul") return 2.0 * out * static_cast<double>(shape_of(0).back());
  if (op == "attention") {
    const Shape& q = shape_of(0);
    const Shape& v = shape_of(2);
    return 2.0 * static_cast<double>(q[0] * q[1] * q[2] * v[2]) * static_cast<double>(q[3] + v[3]);
  }
  return 0.0;
}

}  // namespace

void OpProfile::add(const graph::Function& function, const graph::Node& node, double seconds) {
  OpTotals& totals = by_op[node.op->name];
  totals.seconds += seconds;
  totals.calls += 1;
  totals.flops += node_flops(function, node);
}

double OpProfile::total_seconds() const {
  double total = 0;
  for (const auto& [name, totals] : by_op) total += totals.seconds;
  return total;
}

}  // namespace websd::cpu
