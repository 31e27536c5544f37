#include "support/handmade_png.h"

#include <zlib.h>

#include <cstdint>
#include <stdexcept>

namespace websd::test {
namespace {

void append_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

}  // namespace

std::string png_chunk(const std::string& type, const std::string& data) {
  std::string out;
  append_u32(out, static_cast<std::uint32_t>(data.size()));
  const std::string body = type + data;
  out += body;
  append_u32(out, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  return out;
}

std::string zlib_compress(const std::string& data) {
  uLongf size = compressBound(data.size());
  std::string compressed(size, '\0');
  if (compress(reinterpret_cast<Bytef*>(compressed.data()), &size, reinterpret_cast<const Bytef*>(data.data()),
               data.size()) != Z_OK) {
    throw std::runtime_error("zlib compress failed");
  }
  compressed.resize(size);
  return compressed;
}

std::string handmade_png(int width, int height, int bit_depth, int color_type, const std::string& raw_rows,
                         const std::string& extra_chunks) {
  std::string header;
  append_u32(header, static_cast<std::uint32_t>(width));
  append_u32(header, static_cast<std::uint32_t>(height));
  header += {static_cast<char>(bit_depth), static_cast<char>(color_type), 0, 0, 0};
  return "\x89PNG\r\n\x1a\n" + png_chunk("IHDR", header) + extra_chunks + png_chunk("IDAT", zlib_compress(raw_rows)) +
         png_chunk("IEND", "");
}

}  // namespace websd::test
