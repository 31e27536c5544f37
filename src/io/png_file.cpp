#include "io/png_file.h"

#include <spng.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/error.h"
#include "io/atomic_file.h"

namespace websd {
namespace {

constexpr std::uint32_t kMaxSide = 16384;                 // larger than any SD image; bounds allocations
constexpr std::size_t kMaxChunkBytes = 64 * 1024 * 1024;  // text/ICC chunks beyond this are refused
// Far above any PNG of kMaxSide pixels a side that a tool writes (about 1 GiB as uncompressed RGBA8).
constexpr std::uint64_t kMaxFileBytes = std::uint64_t{2} << 30;

struct ContextDeleter {
  void operator()(spng_ctx* context) const { spng_ctx_free(context); }
};
using Context = std::unique_ptr<spng_ctx, ContextDeleter>;

Context make_context(int flags) {
  Context context(spng_ctx_new(flags));
  if (!context) throw Error("png", "out of memory creating a PNG codec");
  return context;
}

std::string describe(int code) {
  return std::string(spng_strerror(code)) + " (libspng error " + std::to_string(code) + ")";
}

bool is_ascii(const std::string& text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

std::string latin1_to_utf8(const char* text, std::size_t length) {
  std::string out;
  out.reserve(length);
  for (std::size_t i = 0; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      out.push_back(static_cast<char>(byte));
    } else {
      out.push_back(static_cast<char>(0xC0 | (byte >> 6)));
      out.push_back(static_cast<char>(0x80 | (byte & 0x3F)));
    }
  }
  return out;
}

void check_keyword(const std::string& keyword) {
  bool printable = !keyword.empty() && keyword.size() < 80 && keyword.front() != ' ' && keyword.back() != ' ';
  for (const char c : keyword) printable = printable && static_cast<unsigned char>(c) >= 0x20 && c != 0x7F;
  if (!printable) {
    throw Error("png", "text keyword '" + keyword +
                           "' is invalid (use 1-79 printable characters without leading or trailing spaces)");
  }
}

[[noreturn]] void fail_too_large(const std::string& path, const std::string& size) {
  throw Error("png", path + ": holds " + size + " bytes, more than the " + std::to_string(kMaxFileBytes >> 30) +
                         " GiB a PNG file may hold here (is this a PNG image?)");
}

// The whole file, refusing what cannot be a PNG image before reading it: a folder (which an ifstream
// would read as empty), a device (which could be endless) and a file over kMaxFileBytes.
std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_type type = fs::status(path, error).type();
  if (type == fs::file_type::directory) throw Error("png", path + ": is a folder, expected a PNG file");
  if (type == fs::file_type::character || type == fs::file_type::block) {
    throw Error("png", path + ": is a device, expected a PNG file");
  }
  if (type == fs::file_type::regular) {
    const std::uintmax_t size = fs::file_size(path, error);
    if (!error && size > kMaxFileBytes) fail_too_large(path, std::to_string(size));
  }
  errno = 0;
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    throw Error("png", path + ": cannot open: " + std::strerror(errno != 0 ? errno : ENOENT) + " (check the path)");
  }
  std::vector<std::uint8_t> bytes;
  constexpr std::size_t kChunk = 1 << 20;
  while (stream) {  // in chunks: a pipe has no size to check in advance
    const std::size_t done = bytes.size();
    if (done > kMaxFileBytes) fail_too_large(path, "more than " + std::to_string(kMaxFileBytes));
    bytes.resize(done + kChunk);
    stream.read(reinterpret_cast<char*>(bytes.data() + done), static_cast<std::streamsize>(kChunk));
    bytes.resize(done + static_cast<std::size_t>(stream.gcount()));
  }
  if (stream.bad()) throw Error("png", path + ": read failed: " + std::strerror(errno != 0 ? errno : EIO));
  return bytes;
}

// A decoder over `bytes` with the whole file (image and every chunk) read, so all text is seen.
struct Decoded {
  Context context;
  RgbImage image;
};

Decoded decode(const std::vector<std::uint8_t>& bytes, const std::string& origin) {
  static constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0) {
    throw Error("png", origin + ": not a PNG file (no PNG signature; convert the image to PNG first)");
  }
  Decoded decoded{make_context(0), {}};
  spng_ctx* context = decoded.context.get();
  spng_set_image_limits(context, kMaxSide, kMaxSide);
  spng_set_chunk_limits(context, kMaxChunkBytes, kMaxChunkBytes);
  const auto fail = [&](const std::string& what, int code) {
    return Error("png", origin + ": " + what + ": " + describe(code) + " (the file is truncated or corrupt)");
  };
  if (const int code = spng_set_png_buffer(context, bytes.data(), bytes.size())) throw fail("cannot read", code);
  spng_ihdr header{};
  if (const int code = spng_get_ihdr(context, &header)) throw fail("bad header", code);
  // RGBA8 is the one output format libspng converts every colour type and depth to.
  std::size_t rgba_size = 0;
  if (const int code = spng_decoded_image_size(context, SPNG_FMT_RGBA8, &rgba_size)) throw fail("bad image size", code);
  std::vector<std::uint8_t> rgba(rgba_size);
  if (const int code = spng_decode_image(context, rgba.data(), rgba.size(), SPNG_FMT_RGBA8, 0)) {
    throw fail("cannot decode the image", code);
  }
  RgbImage& image = decoded.image;
  image.width = static_cast<int>(header.width);
  image.height = static_cast<int>(header.height);
  image.pixels.resize(rgba.size() / 4 * 3);
  for (std::size_t pixel = 0; pixel < rgba.size() / 4; ++pixel) {
    std::memcpy(&image.pixels[pixel * 3], &rgba[pixel * 4], 3);  // alpha dropped, as PIL's convert("RGB")
  }
  return decoded;
}

}  // namespace

std::vector<std::uint8_t> png_encode_rgb(const RgbImage& image, const std::vector<PngText>& texts) {
  if (image.width <= 0 || image.height <= 0 || image.width > static_cast<int>(kMaxSide) ||
      image.height > static_cast<int>(kMaxSide)) {
    throw Error("png", "cannot encode a " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                           " image (sides must be 1.." + std::to_string(kMaxSide) + ")");
  }
  const std::size_t expected = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3;
  if (image.pixels.size() != expected) {
    throw Error("png", "image of " + std::to_string(image.width) + "x" + std::to_string(image.height) + " holds " +
                           std::to_string(image.pixels.size()) + " bytes, expected " + std::to_string(expected));
  }
  Context context = make_context(SPNG_CTX_ENCODER);
  spng_set_option(context.get(), SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr header{static_cast<std::uint32_t>(image.width),
                   static_cast<std::uint32_t>(image.height),
                   8,
                   SPNG_COLOR_TYPE_TRUECOLOR,
                   0,
                   0,
                   0};
  if (const int code = spng_set_ihdr(context.get(), &header)) throw Error("png", "bad header: " + describe(code));

  // libspng takes mutable pointers; these copies outlive the encode call.
  std::vector<std::string> bodies;
  bodies.reserve(texts.size());
  std::vector<spng_text> chunks(texts.size());
  char empty[1] = "";
  for (std::size_t i = 0; i < texts.size(); ++i) {
    check_keyword(texts[i].keyword);
    bodies.push_back(texts[i].text);
    spng_text& chunk = chunks[i];
    std::memcpy(chunk.keyword, texts[i].keyword.c_str(), texts[i].keyword.size() + 1);
    chunk.type = is_ascii(texts[i].text) ? SPNG_TEXT : SPNG_ITXT;
    chunk.length = bodies.back().size();
    chunk.text = bodies.back().data();
    chunk.language_tag = empty;
    chunk.translated_keyword = empty;
  }
  if (!chunks.empty()) {
    if (const int code = spng_set_text(context.get(), chunks.data(), static_cast<std::uint32_t>(chunks.size()))) {
      throw Error("png", "cannot store text chunk: " + describe(code));
    }
  }
  if (const int code = spng_encode_image(context.get(), image.pixels.data(), image.pixels.size(), SPNG_FMT_PNG,
                                         SPNG_ENCODE_FINALIZE)) {
    throw Error("png", "cannot encode the image: " + describe(code));
  }
  std::size_t length = 0;
  int code = 0;
  std::unique_ptr<void, decltype(&std::free)> buffer(spng_get_png_buffer(context.get(), &length, &code), &std::free);
  if (!buffer) throw Error("png", "cannot encode the image: " + describe(code));
  const auto* begin = static_cast<const std::uint8_t*>(buffer.get());
  return std::vector<std::uint8_t>(begin, begin + length);
}

void png_write_rgb(const std::string& path, const RgbImage& image, const std::vector<PngText>& texts) {
  const std::vector<std::uint8_t> bytes = png_encode_rgb(image, texts);  // before touching the file system
  atomic_write_file(path, [&](std::ostream& stream) {
    stream.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  });
}

RgbImage png_decode_rgb(const std::vector<std::uint8_t>& bytes, const std::string& origin) {
  return decode(bytes, origin).image;
}

RgbImage png_read_rgb(const std::string& path) { return png_decode_rgb(read_file_bytes(path), path); }

std::vector<PngText> png_read_text(const std::string& path) {
  // spng reads text chunks from the buffer when asked, so the bytes must outlive the context.
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  const Decoded decoded = decode(bytes, path);
  std::uint32_t count = 0;
  if (spng_get_text(decoded.context.get(), nullptr, &count) != 0) return {};  // no text chunk at all
  std::vector<spng_text> chunks(count);
  if (const int code = spng_get_text(decoded.context.get(), chunks.data(), &count)) {
    throw Error("png", path + ": cannot read text chunks: " + describe(code));
  }
  std::vector<PngText> texts;
  for (const spng_text& chunk : chunks) {
    const bool utf8 = chunk.type == SPNG_ITXT;
    texts.push_back(
        {chunk.keyword, utf8 ? std::string(chunk.text, chunk.length) : latin1_to_utf8(chunk.text, chunk.length)});
  }
  return texts;
}

}  // namespace websd
