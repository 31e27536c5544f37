// Analysis pass: checks that a function (or every function of a module) is well-formed before a
// later stage trusts it. A Function built through add_node is well-formed by construction; verify
// catches what a rewriting pass or an IR reader (Function::from_parts) may have broken:
//   - the symbol is non-empty; input and weight names are non-empty and unique;
//   - the input/weight lists refer to values of that kind, and every node output names its node;
//   - every node's op is registered, its input count is within the op's arity, and its inputs refer
//     to inputs, weights or outputs of EARLIER nodes (no dangling or forward ids);
//   - every value's type equals what the op's inference gives for its node's inputs and attributes;
//   - the function has outputs and they exist; for a module, symbols are unique.
// Throws websd::Error("verify", ...) naming the function, the node index, the op and the problem.
// Pure and thread-safe.
#pragma once

#include "graph/function.h"
#include "graph/module.h"

namespace websd::passes {

void verify(const graph::Function& function);
void verify(const graph::Module& module);

}  // namespace websd::passes
