// Conversions between 8-bit RGB images and the float tensors the VAE reads and writes, with the
// arithmetic of diffusers' VaeImageProcessor (float32 throughout):
//   in:  x / 255 * 2 - 1, laid out [1, 3, H, W]
//   out: (x / 2 + 0.5).clamp(0, 1), then round(255 x) with ties to even (numpy's round)
// Pure functions; thread-safe.
#pragma once

#include "core/host_tensor.h"
#include "core/rgb_image.h"

namespace websd {

// An RGB image as the VAE encoder's input [1, 3, H, W] in [-1, 1].
HostTensor image_to_signed_tensor(const RgbImage& image);
// The VAE decoder's output [1, 3, H, W] mapped to [0, 1] (the float image diffusers returns).
HostTensor decoded_to_unit_tensor(const HostTensor& decoded);
// A [1, 3, H, W] tensor in [0, 1] as 8-bit RGB. Throws websd::Error for another shape.
RgbImage unit_tensor_to_image(const HostTensor& unit);

}  // namespace websd
