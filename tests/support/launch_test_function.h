// A small graph function for the launch-list tests (tests/runtime, tests/cpu): one input, one
// weight, a reshape of an intermediate (an arena view), a reshape of the input (an input view), a
// constant and two outputs, one of them the arena view. Header-only, so each test binary that uses
// it links the graph library itself and the shared test support stays small.
#pragma once

#include <vector>

#include "graph/function_builder.h"

namespace websd::test {

struct LaunchTestFunction {
  graph::Function function;
  graph::ValueId x = -1;           // input "x" f32[2,3]
  graph::ValueId w = -1;           // weight "w" f32[3]
  graph::ValueId product = -1;     // mul(x, w): an arena buffer
  graph::ValueId view = -1;        // reshape(product, [3,2]): a view of it, output 1
  graph::ValueId activated = -1;   // silu(view)
  graph::ValueId input_view = -1;  // reshape(x, [3,2]): a view of the input
  graph::ValueId result = -1;      // activated * 0.5 + input_view: output 0
};

// func @small(%x: f32[2,3]) { weight w: f32[3]
//   p = mul(x, w); v = reshape(p, [3,2]); s = silu(v); t = add(mul(s, 0.5), reshape(x, [3,2])); return t, v }
inline LaunchTestFunction launch_test_function() {
  LaunchTestFunction f{graph::Function("small")};
  graph::FunctionBuilder b(f.function);
  f.x = b.input("x", {DType::kF32, {2, 3}});
  f.w = b.weight("w", {3});
  f.product = b.mul(f.x, f.w);
  f.view = b.reshape(f.product, {3, 2});
  f.activated = b.op("silu", {f.view});
  f.input_view = b.reshape(f.x, {3, 2});
  f.result = b.add(b.mul(f.activated, b.scalar(0.5)), f.input_view);
  f.function.set_outputs({f.result, f.view});
  return f;
}

// The weight values the tests bind to "w".
inline std::vector<float> launch_test_weight() { return {0.5f, -1.25f, 2.0f}; }

}  // namespace websd::test
