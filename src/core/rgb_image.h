// An 8-bit RGB image as the pipeline produces it and PNG files (io/png_file.h) or a browser canvas
// take it. Value type.
#pragma once

#include <cstdint>
#include <vector>

namespace websd {

// Row-major 8-bit RGB: pixels[(y * width + x) * 3 + c].
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;
};

}  // namespace websd
