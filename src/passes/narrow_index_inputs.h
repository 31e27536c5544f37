// Pass: int64 function inputs that only index tables (gather_rows' ids) become int32, for targets
// whose kernels have no 64-bit integers (WGSL). The runtime narrows the caller's int64 ids at the
// edge, range checked (runtime::Executor::set_input), so callers keep passing int64 token ids.
// An int64 input read by any other op is left alone: its consumer's kernel decides. Pure.
#pragma once

#include "graph/function.h"

namespace websd::passes {

graph::Function narrow_index_inputs(const graph::Function& function);

}  // namespace websd::passes
