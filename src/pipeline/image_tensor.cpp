#include "pipeline/image_tensor.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace websd {
namespace {

void require_rgb_tensor(const HostTensor& tensor, const char* what) {
  if (tensor.shape.size() != 4 || tensor.shape[0] != 1 || tensor.shape[1] != 3 || tensor.shape[2] <= 0 ||
      tensor.shape[3] <= 0) {
    throw Error("pipeline", std::string(what) + " has shape " + shape_to_string(tensor.shape) +
                                ", expected [1,3,height,width] (one RGB image)");
  }
}

}  // namespace

HostTensor image_to_signed_tensor(const RgbImage& image) {
  const std::size_t plane = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
  HostTensor tensor({1, 3, image.height, image.width});
  for (std::size_t pixel = 0; pixel < plane; ++pixel) {
    for (std::size_t channel = 0; channel < 3; ++channel) {
      const float unit = static_cast<float>(image.pixels[pixel * 3 + channel]) / 255.0f;
      tensor.data[channel * plane + pixel] = 2.0f * unit - 1.0f;
    }
  }
  return tensor;
}

HostTensor decoded_to_rgba(const HostTensor& decoded) {
  require_rgb_tensor(decoded, "VAE decoder output");
  const std::int64_t height = decoded.shape[2], width = decoded.shape[3];
  const auto plane = static_cast<std::size_t>(height * width);
  HostTensor rgba({height, width, 4});
  for (std::size_t pixel = 0; pixel < plane; ++pixel) {
    for (std::size_t channel = 0; channel < 3; ++channel) {
      const float unit = std::clamp(decoded.data[channel * plane + pixel] * 0.5f + 0.5f, 0.0f, 1.0f);
      rgba.data[pixel * 4 + channel] = unit * 255.0f;
    }
    rgba.data[pixel * 4 + 3] = 255.0f;
  }
  return rgba;
}

RgbImage rgba_to_image(const HostTensor& rgba) {
  if (rgba.shape.size() != 3 || rgba.shape[0] <= 0 || rgba.shape[1] <= 0 || rgba.shape[2] != 4 ||
      rgba.numel() != shape_numel(rgba.shape)) {
    throw Error("pipeline", "RGBA image has shape " + shape_to_string(rgba.shape) + ", expected [height,width,4]");
  }
  RgbImage image;
  image.height = static_cast<int>(rgba.shape[0]);
  image.width = static_cast<int>(rgba.shape[1]);
  const std::size_t plane = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
  image.pixels.resize(plane * 3);
  for (std::size_t pixel = 0; pixel < plane; ++pixel) {
    for (std::size_t channel = 0; channel < 3; ++channel) {
      // nearbyint rounds ties to even, as numpy's round does; NaN (a diverged model) becomes black.
      const float value = std::clamp(rgba.data[pixel * 4 + channel], 0.0f, 255.0f);
      image.pixels[pixel * 3 + channel] = std::isnan(value) ? 0 : static_cast<std::uint8_t>(std::nearbyint(value));
    }
  }
  return image;
}

}  // namespace websd
