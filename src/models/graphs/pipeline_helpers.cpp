#include "models/graphs/pipeline_helpers.h"

#include "core/error.h"
#include "graph/function_builder.h"
#include "graph/function_inline.h"
#include "models/graphs/graph_sizes.h"
#include "models/graphs/sd_graphs.h"

namespace websd {

graph::Function unet_cfg_graph(const UNetConfig& config, std::int64_t latent_h, std::int64_t latent_w,
                               std::int64_t tokens) {
  const graph::Function unet = unet_graph(config, 2, latent_h, latent_w, tokens);
  const auto input_type = [&](std::size_t i) { return unet.value(unet.inputs().at(i)).type; };
  TensorType sample_type = input_type(0), timestep_type = input_type(1);
  sample_type.shape[0] = 1;
  timestep_type.shape[0] = 1;
  graph::Function function("unet_cfg");
  graph::FunctionBuilder b(function);
  const graph::ValueId sample = b.input("sample", sample_type);
  const graph::ValueId timestep = b.input("timestep", timestep_type);
  const graph::ValueId context = b.input("encoder_hidden_states", input_type(2));
  const graph::ValueId scale = b.input("guidance_scale", {DType::kF32, {1}});
  const graph::ValueId prediction = graph::inline_function(
      function, unet, {b.concat({sample, sample}, 0), b.concat({timestep, timestep}, 0), context})[0];
  const graph::ValueId uncond = b.slice(prediction, 0, 0, 1);
  const graph::ValueId cond = b.slice(prediction, 0, 1, 2);
  // The host's order of operations (pipeline/guidance.cpp), so both give the same float32 values.
  function.set_outputs({b.add(uncond, b.mul(scale, b.sub(cond, uncond)))});
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
