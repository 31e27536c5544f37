#include "passes/fuse_conv_residual.h"

#include <map>

#include "graph/op_registry.h"
#include "passes/function_rewrite.h"
#include "passes/value_uses.h"

namespace websd::passes {
namespace {

using graph::ValueId;

bool fusable_conv(const graph::Function& function, ValueId id, const std::vector<int>& uses) {
  const auto& value = function.value(id);
  if (value.kind != graph::ValueKind::kNode || uses[id] != 1) return false;
  const auto& producer = function.nodes()[value.node];
  return producer.op->name == "conv2d_nhwc" && producer.inputs.size() == 3;
}

}  // namespace

graph::Function fuse_conv_residual(const graph::Function& function) {
  const auto uses = value_uses(function);
  // add node index -> {conv node index, residual value}
  std::map<std::int32_t, std::pair<std::int32_t, ValueId>> fusions;
  std::vector<bool> moved(function.nodes().size(), false);
  for (std::size_t n = 0; n < function.nodes().size(); ++n) {
    const auto& node = function.nodes()[n];
    if (node.op->name != "add") continue;
    const ValueId a = node.inputs[0], b = node.inputs[1];
    if (function.value(a).type != function.value(b).type) continue;
    for (const auto& [conv_out, residual] : {std::pair{a, b}, std::pair{b, a}}) {
      if (fusable_conv(function, conv_out, uses) && conv_out != residual) {
        const std::int32_t conv_node = function.value(conv_out).node;
        fusions[static_cast<std::int32_t>(n)] = {conv_node, residual};
        moved[conv_node] = true;
        break;
      }
    }
  }
  if (fusions.empty()) return function;

  FunctionRewrite rewrite(function);
  for (std::size_t n = 0; n < function.nodes().size(); ++n) {
    if (moved[n]) continue;
    const auto& node = function.nodes()[n];
    const auto fused = fusions.find(static_cast<std::int32_t>(n));
    if (fused == fusions.end()) {
      rewrite.copy(node);
      continue;
    }
    const graph::Node& conv = function.nodes()[fused->second.first];
    std::vector<ValueId> inputs = rewrite.mapped(conv.inputs);
    inputs.push_back(rewrite.mapped(fused->second.second));
    rewrite.emit_for(node, conv.op->name, inputs, conv.attrs);
  }
  return rewrite.finish();
}

}  // namespace websd::passes
