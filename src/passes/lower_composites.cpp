#include "passes/lower_composites.h"

#include <vector>

#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "passes/function_rewrite.h"

namespace websd::passes {
namespace {

bool expandable(const graph::Node& node, const std::function<bool(const std::string&)>& keep) {
  return node.op->has_trait(graph::kTraitComposite) && !keep(node.op->name);
}

graph::Function lower_once(const graph::Function& source, const std::function<bool(const std::string&)>& keep) {
  FunctionRewrite rewrite(source);
  graph::FunctionBuilder builder(rewrite.target());
  for (const auto& node : source.nodes()) {
    if (!expandable(node, keep)) {
      rewrite.copy(node);
      continue;
    }
    // Every composite has one (tests/graph/composite_ops_test.cpp holds the registries to that).
    const graph::DecomposeFn& decompose = *graph::op_decomposition(node.op->name);
    const std::vector<graph::ValueId> outputs = decompose(builder, rewrite.mapped(node.inputs), node.attrs);
    for (std::size_t i = 0; i < outputs.size(); ++i) rewrite.map(node.outputs[i], outputs[i]);
  }
  return rewrite.finish();
}

bool needs_lowering(const graph::Function& function, const std::function<bool(const std::string&)>& keep) {
  for (const auto& node : function.nodes()) {
    if (expandable(node, keep)) return true;
  }
  return false;
}

}  // namespace

graph::Function lower_composites(const graph::Function& function, const std::function<bool(const std::string&)>& keep) {
  graph::Function current = lower_once(function, keep);
  while (needs_lowering(current, keep)) current = lower_once(current, keep);
  return current;
}

}  // namespace websd::passes
