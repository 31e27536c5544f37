// Conversions between 8-bit RGB images and the float tensors the VAE reads and writes, with the
// arithmetic of diffusers' VaeImageProcessor (float32 throughout):
//   in:  x / 255 * 2 - 1, laid out [1, 3, H, W]
//   out: 255 * (x / 2 + 0.5).clamp(0, 1), then rounded with ties to even (numpy's round)
// Pure functions; thread-safe.
#pragma once

#include "core/host_tensor.h"
#include "core/rgb_image.h"

namespace websd {

// An RGB image as the VAE encoder's input [1, 3, H, W] in [-1, 1].
HostTensor image_to_signed_tensor(const RgbImage& image);
// The VAE decoder's output [1, 3, H, W] as byte-range RGBA [H, W, 4]: 255 * clamp(x / 2 + 0.5, 0, 1)
// per channel (diffusers' float image times 255, unrounded), alpha 255. What the compiled
// image_to_rgba function computes (models/graphs/pipeline_helpers.h), in the same float32 order.
HostTensor decoded_to_rgba(const HostTensor& decoded);
// A byte-range RGBA tensor [H, W, 4] as 8-bit RGB (alpha dropped), rounded with ties to even; NaN
// becomes 0. Throws websd::Error for another shape.
RgbImage rgba_to_image(const HostTensor& rgba);

}  // namespace websd
