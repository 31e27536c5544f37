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

HostTensor decoded_to_unit_tensor(const HostTensor& decoded) {
  require_rgb_tensor(decoded, "VAE decoder output");
  HostTensor unit(decoded.shape);
  for (std::size_t i = 0; i < decoded.data.size(); ++i) {
    unit.data[i] = std::clamp(decoded.data[i] / 2.0f + 0.5f, 0.0f, 1.0f);
  }
  return unit;
}

RgbImage unit_tensor_to_image(const HostTensor& unit) {
  require_rgb_tensor(unit, "image tensor");
  RgbImage image;
  image.height = static_cast<int>(unit.shape[2]);
  image.width = static_cast<int>(unit.shape[3]);
  const std::size_t plane = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
  image.pixels.resize(plane * 3);
  for (std::size_t pixel = 0; pixel < plane; ++pixel) {
    for (std::size_t channel = 0; channel < 3; ++channel) {
      // nearbyint rounds ties to even, as numpy's round does; NaN (a diverged model) becomes black.
      const float scaled = std::clamp(unit.data[channel * plane + pixel], 0.0f, 1.0f) * 255.0f;
      image.pixels[pixel * 3 + channel] = std::isnan(scaled) ? 0 : static_cast<std::uint8_t>(std::nearbyint(scaled));
    }
  }
  return image;
}

}  // namespace websd
