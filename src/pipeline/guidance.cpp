#include "pipeline/guidance.h"

#include <algorithm>

#include "core/error.h"

namespace websd {
namespace {

// `shape` with its leading (batch) dimension replaced by `batch`.
Shape with_batch(Shape shape, std::int64_t batch) {
  shape.at(0) = batch;
  return shape;
}

}  // namespace

bool guidance_enabled(double guidance_scale) { return guidance_scale > 1.0; }

HostTensor stack_pair(const HostTensor& first, const HostTensor& second) {
  if (first.shape.empty() || first.shape[0] != 1 || first.shape != second.shape) {
    throw Error("pipeline", "cannot stack " + shape_to_string(first.shape) + " and " + shape_to_string(second.shape) +
                                " (expected two [1,...] tensors of one shape)");
  }
  HostTensor pair(with_batch(first.shape, 2));
  std::copy(first.data.begin(), first.data.end(), pair.data.begin());
  std::copy(second.data.begin(), second.data.end(), pair.data.begin() + static_cast<std::ptrdiff_t>(first.data.size()));
  return pair;
}

HostTensor combine_guided(const HostTensor& prediction_pair, double guidance_scale) {
  if (prediction_pair.shape.empty() || prediction_pair.shape[0] != 2) {
    throw Error("pipeline", "guided prediction has shape " + shape_to_string(prediction_pair.shape) +
                                ", expected 2 rows (unconditional, conditional)");
  }
  HostTensor result(with_batch(prediction_pair.shape, 1));
  const std::size_t half = result.data.size();
  const auto scale = static_cast<float>(guidance_scale);
  for (std::size_t i = 0; i < half; ++i) {
    const float uncond = prediction_pair.data[i];
    const float cond = prediction_pair.data[half + i];
    result.data[i] = uncond + scale * (cond - uncond);
  }
  return result;
}

DeviceTensor guided_prediction(DiffusionBackend& backend, const DeviceTensor& model_input, double timestep,
                               const DeviceTensor& context, double guidance_scale) {
  const bool guided = guidance_enabled(guidance_scale);
  const std::int64_t rows = guided ? 2 : 1;
  if (context.shape().empty() || context.shape()[0] != rows) {
    throw Error("pipeline", "context has shape " + shape_to_string(context.shape()) + ", expected " +
                                std::to_string(rows) +
                                (guided ? " rows (negative, prompt) for a guided run" : " row (prompt)"));
  }
  DeviceTensor prediction = guided ? backend.unet_guided(model_input, timestep, context, guidance_scale)
                                   : backend.unet(model_input, timestep, context);
  if (prediction.shape() != model_input.shape()) {
    throw Error("pipeline", "UNet returned shape " + shape_to_string(prediction.shape()) + ", expected " +
                                shape_to_string(model_input.shape()));
  }
  return prediction;
}

}  // namespace websd
