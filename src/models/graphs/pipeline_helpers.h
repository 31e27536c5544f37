// Small helper functions of the txt2img pipeline, compiled into the same module as the networks so
// that a target runs them beside the UNet and the VAE instead of on the host. Pure functions.
#pragma once

#include <cstdint>

#include "core/host_tensor.h"
#include "graph/function.h"

namespace websd {

// Symbol "cfg_concat": the classifier-free-guidance batch. Inputs "uncond" and "cond", both
// f32[item_shape] (item_shape[0] is the batch); output f32 with the batch doubled, uncond rows
// first, as the UNet call with guidance expects. Throws websd::Error for an empty or bad shape.
graph::Function cfg_concat_graph(const Shape& item_shape);

// Symbol "image_to_rgba": input "image" f32[1, 3, height, width], a decoded image in about [-1, 1];
// output f32[height, width, 4] = 255 * clamp(image / 2 + 0.5, 0, 1) per RGB channel and 255 as
// alpha: byte-range values, rounded to bytes (round to nearest) by whoever stores them.
graph::Function image_to_rgba_graph(std::int64_t height, std::int64_t width);

}  // namespace websd
