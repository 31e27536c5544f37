#include "passes/fuse_norm_activation.h"

#include "graph/op_registry.h"
#include "passes/function_rewrite.h"
#include "passes/value_uses.h"

namespace websd::passes {

graph::Function fuse_norm_activation(const graph::Function& function) {
  using graph::ValueId;
  const auto uses = value_uses(function);
  // norm node index -> silu node index
  std::vector<std::int32_t> activation_of(function.nodes().size(), -1);
  std::vector<bool> absorbed(function.nodes().size(), false);
  for (std::size_t n = 0; n < function.nodes().size(); ++n) {
    const auto& node = function.nodes()[n];
    if (node.op->name != "silu") continue;
    const auto& input = function.value(node.inputs[0]);
    if (input.kind != graph::ValueKind::kNode || uses[node.inputs[0]] != 1) continue;
    const auto& norm = function.nodes()[input.node];
    if (norm.op->name != "group_norm_nhwc" || norm.attrs.has("activation")) continue;
    activation_of[input.node] = static_cast<std::int32_t>(n);
    absorbed[n] = true;
  }

  FunctionRewrite rewrite(function);
  for (std::size_t n = 0; n < function.nodes().size(); ++n) {
    if (absorbed[n]) continue;
    const auto& node = function.nodes()[n];
    Attrs attrs = node.attrs;
    if (activation_of[n] >= 0) attrs.set("activation", std::string("silu"));
    const auto outputs = rewrite.emit_for(node, node.op->name, rewrite.mapped(node.inputs), attrs);
    if (activation_of[n] >= 0) rewrite.map(function.nodes()[activation_of[n]].outputs[0], outputs[0]);
  }
  return rewrite.finish();
}

}  // namespace websd::passes
