// The registry of ops: one OpDef per op, holding its name, arity, shape and dtype inference, traits
// and reference semantics, defined once for the compiler (graph nodes refer to these definitions)
// and for the runtimes (a device checks a launch's operand types with the op's own inference). It
// knows nothing of graphs: the decompositions of composite ops are graph code
// (graph/op_registry.h). Built once on first use, then read-only (thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "core/tensor_type.h"

namespace websd::ops {

enum OpTrait : std::uint32_t {
  kTraitNone = 0,
  kTraitElementwise = 1u << 0,  // output element i depends only on input elements i (after broadcast)
  kTraitComposite = 1u << 1,    // has a decomposition into primitive ops (graph/op_registry.h)
  kTraitShapeOnly = 1u << 2,    // reorders or views data without arithmetic
};

using InferFn = std::function<std::vector<TensorType>(const std::vector<TensorType>& inputs, const Attrs& attrs)>;

struct OpDef {
  std::string name;
  int min_inputs = 1;
  int max_inputs = 1;
  std::uint32_t traits = kTraitNone;
  InferFn infer;
  std::string summary;  // one line: what the op computes (its reference semantics)

  bool has_trait(OpTrait trait) const { return (traits & trait) != 0; }
};

// Throws websd::Error naming the op if it is not registered.
const OpDef& op_lookup(const std::string& name);
std::vector<const OpDef*> op_list();

// Thrown by infer functions: message says which attribute or input disagrees.
[[noreturn]] void op_type_error(const std::string& detail);

}  // namespace websd::ops
