// PNG files for generated images (libspng). Writing: 8-bit RGB with text chunks (the generation
// parameters), committed atomically so a failure never leaves a partial file or touches an existing
// one. Reading: any PNG colour type and bit depth, converted to 8-bit RGB as PIL's convert("RGB")
// does (gray replicated, alpha dropped, palette expanded, 16-bit reduced), gamma left alone.
// Pure functions on value types; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rgb_image.h"

namespace websd {

// A PNG text chunk. `text` is UTF-8; it is stored as tEXt when it is pure ASCII (readable by every
// tool), else as iTXt (UTF-8), as Pillow and A1111 do.
struct PngText {
  std::string keyword;  // 1-79 printable Latin-1 characters, e.g. "parameters"
  std::string text;
  bool operator==(const PngText&) const = default;
};

// The PNG bytes of `image`. Throws websd::Error for an empty image, a pixel buffer of the wrong
// size, or an invalid keyword.
std::vector<std::uint8_t> png_encode_rgb(const RgbImage& image, const std::vector<PngText>& texts = {});
// png_encode_rgb, then written to `path` through a temporary file and a rename.
void png_write_rgb(const std::string& path, const RgbImage& image, const std::vector<PngText>& texts = {});

// Decodes PNG bytes; `origin` (a path) names the source in errors. Throws websd::Error for data that
// is not a PNG, is truncated or corrupt, or exceeds a limit (16384 pixels a side, 64 MiB in one
// chunk or in a chunk's decompressed text, 1000 text chunks), naming the limit and the value.
RgbImage png_decode_rgb(const std::vector<std::uint8_t>& bytes, const std::string& origin);
// Reads `path` under the input rule (io/input_file.h), then decodes it.
RgbImage png_read_rgb(const std::string& path);
// The tEXt/iTXt/zTXt chunks of a PNG file, in file order, as UTF-8 (tEXt's Latin-1 is converted).
std::vector<PngText> png_read_text(const std::string& path);

}  // namespace websd
