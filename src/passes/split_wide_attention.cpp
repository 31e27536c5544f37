#include "passes/split_wide_attention.h"

#include "graph/op_registry.h"
#include "passes/function_rewrite.h"

namespace websd::passes {

graph::Function split_wide_attention(const graph::Function& function,
                                     const std::function<bool(std::int64_t, std::int64_t)>& fits) {
  FunctionRewrite rewrite(function);
  for (const graph::Node& node : function.nodes()) {
    const bool attention = node.op->name == "attention" && node.inputs.size() == 3;
    if (!attention || node.attrs.get_int("causal", 0, "attention") != 0 ||
        fits(function.value(node.inputs[0]).type.shape.back(), function.value(node.inputs[2]).type.shape.back())) {
      rewrite.copy(node);
      continue;
    }
    graph::Function& out = rewrite.target();
    const auto q = rewrite.mapped(node.inputs[0]), k = rewrite.mapped(node.inputs[1]), v = rewrite.mapped(node.inputs[2]);
    const auto scores = out.add_node("matmul", {q, k}, {{"transpose_b", std::int64_t{1}}})[0];
    const auto scale = out.add_node("constant", {}, {{"values", std::vector<double>{node.attrs.get_float("scale", "attention")}}})[0];
    const auto scaled = out.add_node("mul", {scores, scale})[0];
    const auto p = out.add_node("softmax", {scaled}, {{"axis", std::int64_t{-1}}})[0];
    const auto v_t = out.add_node("permute", {v}, {{"perm", std::vector<std::int64_t>{0, 1, 3, 2}}})[0];
    rewrite.map(node.outputs[0], out.add_node("matmul", {p, v_t}, {{"transpose_b", std::int64_t{1}}})[0]);
  }
  return rewrite.finish();
}

}  // namespace websd::passes
