#include "io/png_file.h"

#include <spng.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"

namespace websd {
namespace {

constexpr std::uint32_t kMaxSide = 16384;                 // larger than any SD image; bounds allocations
constexpr std::size_t kMaxChunkBytes = 64 * 1024 * 1024;  // text/ICC chunks beyond this are refused
// libspng's own limit on the text (and other repeatable) chunks it keeps: SPNG_MAX_CHUNK_COUNT.
constexpr std::size_t kMaxTextChunks = 1000;

struct ContextDeleter {
  void operator()(spng_ctx* context) const { spng_ctx_free(context); }
};
using Context = std::unique_ptr<spng_ctx, ContextDeleter>;

Context make_context(int flags) {
  Context context(spng_ctx_new(flags));
  if (!context) throw Error("png", "out of memory creating a PNG codec");
  return context;
}

std::span<const std::uint8_t> as_bytes(const std::string& text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
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

std::uint32_t big_endian_u32(const std::uint8_t* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) | bytes[3];
}

// What the chunks of a PNG hold, walked without decoding them: enough to say which limit a refused
// file exceeds.
struct ChunkCensus {
  std::uint32_t width = 0, height = 0;  // from IHDR
  std::size_t text_chunks = 0;          // tEXt, zTXt, iTXt
  std::uint32_t largest_length = 0;
  std::string largest_type;
};

ChunkCensus take_census(std::span<const std::uint8_t> bytes) {
  ChunkCensus census;
  for (std::uint64_t at = 8; at + 8 <= bytes.size();) {
    const std::uint32_t length = big_endian_u32(&bytes[at]);
    const std::string type(reinterpret_cast<const char*>(&bytes[at + 4]), 4);
    if (type == "IHDR" && at + 16 <= bytes.size()) {
      census.width = big_endian_u32(&bytes[at + 8]);
      census.height = big_endian_u32(&bytes[at + 12]);
    }
    if (type == "tEXt" || type == "zTXt" || type == "iTXt") ++census.text_chunks;
    if (length > census.largest_length) {
      census.largest_length = length;
      census.largest_type = type;
    }
    if (type == "IEND") break;
    at += std::uint64_t{12} + length;
  }
  return census;
}

// Why libspng refused `bytes` with `code`: the limit and the value for the limits websd sets, else
// libspng's reason.
std::string refusal(std::span<const std::uint8_t> bytes, int code) {
  const std::string strip = " (re-save the image without its metadata)";
  if (code == SPNG_EUSER_WIDTH || code == SPNG_EUSER_HEIGHT) {
    const ChunkCensus census = take_census(bytes);
    return "the image is " + std::to_string(census.width) + "x" + std::to_string(census.height) +
           " pixels, more than websd reads (at most " + std::to_string(kMaxSide) + " a side: resize it)";
  }
  if (code == SPNG_ECHUNK_LIMITS) {
    const ChunkCensus census = take_census(bytes);
    if (census.text_chunks > kMaxTextChunks) {
      return "it holds " + std::to_string(census.text_chunks) + " text chunks, more than the " +
             std::to_string(kMaxTextChunks) + " websd reads" + strip;
    }
    if (census.largest_length > kMaxChunkBytes) {
      return "its " + census.largest_type + " chunk holds " + std::to_string(census.largest_length) +
             " bytes, more than the " + std::to_string(kMaxChunkBytes >> 20) + " MiB websd reads of one chunk" + strip;
    }
    return "its text or profile chunks hold more than " + std::to_string(kMaxChunkBytes >> 20) +
           " MiB once decompressed, more than websd reads" + strip;
  }
  return describe(code) + " (the file is truncated or corrupt)";
}

// A decoder over `bytes` with the whole file (image and every chunk) read, so all text is seen.
struct Decoded {
  Context context;
  RgbImage image;
};

Decoded decode(std::span<const std::uint8_t> bytes, const std::string& origin) {
  static constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0) {
    throw Error("png", origin + ": not a PNG file (no PNG signature; convert the image to PNG first)");
  }
  Decoded decoded{make_context(0), {}};
  spng_ctx* context = decoded.context.get();
  spng_set_image_limits(context, kMaxSide, kMaxSide);
  spng_set_chunk_limits(context, kMaxChunkBytes, kMaxChunkBytes);
  const auto fail = [&](const std::string& what, int code) {
    return Error("png", origin + ": " + what + ": " + refusal(bytes, code));
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

RgbImage png_read_rgb(const std::string& path) {
  const std::string bytes = input_file_read("png", path, input_kinds::kPngImage);
  return decode(as_bytes(bytes), path).image;
}

std::vector<PngText> png_read_text(const std::string& path) {
  // spng reads text chunks from the buffer when asked, so the bytes must outlive the context.
  const std::string bytes = input_file_read("png", path, input_kinds::kPngImage);
  const Decoded decoded = decode(as_bytes(bytes), path);
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
