#include "models/graphs/pipeline_helpers.h"

#include "core/error.h"
#include "graph/function_builder.h"
#include "models/graphs/graph_sizes.h"

namespace websd {

graph::Function cfg_concat_graph(const Shape& item_shape) {
  if (item_shape.empty()) {
    throw Error("graphs", "cfg_concat: the item shape is empty (give at least the batch dimension, e.g. [1,77,768])");
  }
  for (const std::int64_t dim : item_shape) graph_sizes::require_positive("graphs", "cfg_concat", "a dimension", dim);
  graph::Function function("cfg_concat");
  graph::FunctionBuilder b(function);
  const graph::ValueId uncond = b.input("uncond", {DType::kF32, item_shape});
  const graph::ValueId cond = b.input("cond", {DType::kF32, item_shape});
  function.set_outputs({b.concat({uncond, cond}, 0)});
  return function;
}

graph::Function image_to_rgba_graph(std::int64_t height, std::int64_t width) {
  graph_sizes::require_positive("graphs", "image_to_rgba", "height", height);
  graph_sizes::require_positive("graphs", "image_to_rgba", "width", width);
  graph::Function function("image_to_rgba");
  graph::FunctionBuilder b(function);
  const graph::ValueId image = b.input("image", {DType::kF32, {1, 3, height, width}});
  const graph::ValueId unit =
      b.op("clamp", {b.add(b.mul(image, b.scalar(0.5)), b.scalar(0.5))}, {{"min", 0.0}, {"max", 1.0}});
  const graph::ValueId planes = b.reshape(b.mul(unit, b.scalar(255.0)), {3, height, width});
  const graph::ValueId rgb = b.permute(planes, {1, 2, 0});
  // There is no broadcast op: 0 * red + 255 is an all-255 plane of the right shape (red is finite).
  const graph::ValueId alpha = b.add(b.mul(b.slice(rgb, 2, 0, 1), b.scalar(0.0)), b.scalar(255.0));
  function.set_outputs({b.concat({rgb, alpha}, 2)});
  return function;
}

}  // namespace websd
