// The registry of graph ops: one OpDef per op, holding its name, arity, shape and dtype inference,
// traits, and, for composite ops, the decomposition into primitives that targets without a fused
// kernel use. Built once on first use, then read-only (thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "graph/function.h"
#include "core/tensor_type.h"

namespace websd::graph {

class FunctionBuilder;

enum OpTrait : std::uint32_t {
  kTraitNone = 0,
  kTraitElementwise = 1u << 0,  // output element i depends only on input elements i (after broadcast)
  kTraitComposite = 1u << 1,    // has a decomposition into primitive ops
  kTraitShapeOnly = 1u << 2,    // reorders or views data without arithmetic
};

using InferFn = std::function<std::vector<TensorType>(const std::vector<TensorType>& inputs, const Attrs& attrs)>;
using DecomposeFn = std::function<std::vector<ValueId>(FunctionBuilder& builder, const std::vector<ValueId>& inputs,
                                                       const Attrs& attrs)>;

struct OpDef {
  std::string name;
  int min_inputs = 1;
  int max_inputs = 1;
  std::uint32_t traits = kTraitNone;
  InferFn infer;
  DecomposeFn decompose;  // set iff kTraitComposite
  std::string summary;    // one line: what the op computes (its reference semantics)

  bool has_trait(OpTrait trait) const { return (traits & trait) != 0; }
};

// Throws websd::Error naming the op if it is not registered.
const OpDef& op_lookup(const std::string& name);
std::vector<const OpDef*> op_list();

// Thrown by infer functions: message says which attribute or input disagrees.
[[noreturn]] void op_type_error(const std::string& detail);

}  // namespace websd::graph
