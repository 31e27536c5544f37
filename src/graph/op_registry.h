// The ops as the graph IR uses them: every op of the registry (ops/op_registry.h, where each is
// defined once: arity, inference, traits), plus what only graph code needs, the decomposition of
// each composite op into primitives that the lower_composites pass applies on targets without a
// fused kernel for it (graph/op_decompositions.cpp). Built once on first use, then read-only
// (thread-safe).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "graph/function.h"
#include "ops/op_registry.h"

namespace websd::graph {

using ops::kTraitComposite;
using ops::kTraitElementwise;
using ops::kTraitNone;
using ops::kTraitShapeOnly;
using ops::op_list;
using ops::op_lookup;
using ops::op_type_error;
using ops::OpDef;
using ops::OpTrait;

class FunctionBuilder;

using DecomposeFn = std::function<std::vector<ValueId>(FunctionBuilder& builder, const std::vector<ValueId>& inputs,
                                                       const Attrs& attrs)>;

// The decomposition of composite op `name`; nullptr for an op without one (every op that lacks
// kTraitComposite).
const DecomposeFn* op_decomposition(const std::string& name);

}  // namespace websd::graph
