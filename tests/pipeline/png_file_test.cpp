// PNG writing (RGB + text chunks, atomic) and reading (every colour type, clear errors).
#include "io/png_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "support/fixtures.h"
#include "support/handmade_png.h"

namespace websd {
namespace {

using test::handmade_png;

using test::read_bytes;

void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

RgbImage test_image() {
  RgbImage image{5, 3, {}};
  for (int i = 0; i < 5 * 3 * 3; ++i) image.pixels.push_back(static_cast<std::uint8_t>(i * 17));
  return image;
}

TEST(PngFile, RoundTripsPixelsAndText) {
  const std::string path = test::make_temp_dir("png") + "/image.png";
  const std::vector<PngText> texts = {{"parameters", "a cat\nSteps: 20, Seed: 1"}, {"Software", "websd"}};
  png_write_rgb(path, test_image(), texts);
  const RgbImage back = png_read_rgb(path);
  EXPECT_EQ(back.width, 5);
  EXPECT_EQ(back.height, 3);
  EXPECT_EQ(back.pixels, test_image().pixels);
  EXPECT_EQ(png_read_text(path), texts);
}

TEST(PngFile, StoresAsciiParametersAsATextChunk) {
  const std::string path = test::make_temp_dir("png") + "/image.png";
  png_write_rgb(path, test_image(), {{"parameters", "a cat"}});
  const std::string bytes = read_bytes(path);
  EXPECT_NE(bytes.find(std::string("tEXtparameters\0a cat", 20)), std::string::npos);
  // 8-bit RGB: IHDR bit depth 8, colour type 2
  EXPECT_EQ(bytes.substr(24, 2), std::string("\x08\x02", 2));
}

TEST(PngFile, StoresUtf8TextAsAnInternationalChunk) {
  const std::string path = test::make_temp_dir("png") + "/image.png";
  const std::string prompt = "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC";  // "café 日本"
  png_write_rgb(path, test_image(), {{"parameters", prompt}});
  EXPECT_NE(read_bytes(path).find("iTXtparameters"), std::string::npos);
  EXPECT_EQ(png_read_text(path).at(0).text, prompt);
}

TEST(PngFile, ReadsGrayRgbaAndSixteenBitImagesAsRgb) {
  const std::string dir = test::make_temp_dir("png");
  // gray 8-bit, 2x1: values 10, 200
  write_bytes(dir + "/gray.png", handmade_png(2, 1, 8, 0, std::string("\0\x0a\xc8", 3)));
  EXPECT_EQ(png_read_rgb(dir + "/gray.png").pixels, (std::vector<std::uint8_t>{10, 10, 10, 200, 200, 200}));
  // RGBA 8-bit, 1x1: alpha dropped
  write_bytes(dir + "/rgba.png", handmade_png(1, 1, 8, 6, std::string("\0\x01\x02\x03\x04", 5)));
  EXPECT_EQ(png_read_rgb(dir + "/rgba.png").pixels, (std::vector<std::uint8_t>{1, 2, 3}));
  // RGB 16-bit, 1x1: the high bytes
  write_bytes(dir + "/rgb16.png", handmade_png(1, 1, 16, 2, std::string("\0\x12\x34\x56\x78\x9a\xbc", 7)));
  EXPECT_EQ(png_read_rgb(dir + "/rgb16.png").pixels, (std::vector<std::uint8_t>{0x12, 0x56, 0x9a}));
}

TEST(PngFile, RejectsANonPngFileByName) {
  const std::string path = test::make_temp_dir("png") + "/photo.jpg";
  write_bytes(path, "\xFF\xD8\xFF\xE0 not a png");
  try {
    png_read_rgb(path);
    FAIL() << "accepted a JPEG";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(path + ": not a PNG file"), std::string::npos) << error.what();
  }
}

TEST(PngFile, RejectsATruncatedFile) {
  const std::string dir = test::make_temp_dir("png");
  png_write_rgb(dir + "/full.png", test_image());
  const std::string bytes = read_bytes(dir + "/full.png");
  write_bytes(dir + "/cut.png", bytes.substr(0, bytes.size() / 2));
  try {
    png_read_rgb(dir + "/cut.png");
    FAIL() << "accepted a truncated PNG";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("truncated or corrupt"), std::string::npos) << error.what();
  }
}

TEST(PngFile, RefusalsAtALimitNameTheLimitAndTheValue) {
  const std::string dir = test::make_temp_dir("png");
  const std::string pixel = std::string("\0\x01\x02\x03", 4);
  const auto message = [&](const std::string& name, const std::string& png) {
    write_bytes(dir + "/" + name, png);
    try {
      png_read_rgb(dir + "/" + name);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("(accepted)");
  };
  const std::string wide = message("wide.png", handmade_png(16385, 2, 8, 2, pixel));
  EXPECT_NE(wide.find("the image is 16385x2 pixels, more than websd reads (at most 16384 a side"), std::string::npos)
      << wide;
  std::string texts;
  for (int i = 0; i < 1001; ++i) texts += test::png_chunk("tEXt", std::string("k\0v", 3));
  const std::string many = message("texts.png", handmade_png(1, 1, 8, 2, pixel, texts));
  EXPECT_NE(many.find("it holds 1001 text chunks, more than the 1000 websd reads"), std::string::npos) << many;
  for (const std::string& refused : {wide, many}) {
    EXPECT_EQ(refused.find("truncated or corrupt"), std::string::npos) << refused;
  }
}

TEST(PngFile, AMissingFileIsAnErrorNamingIt) { EXPECT_THROW(png_read_rgb("/nonexistent/websd/x.png"), Error); }

TEST(PngFile, FailedWriteLeavesTheExistingFileUntouched) {
  const std::string path = test::make_temp_dir("png") + "/keep.png";
  write_bytes(path, "precious");
  RgbImage wrong = test_image();
  wrong.pixels.pop_back();
  EXPECT_THROW(png_write_rgb(path, wrong), Error);
  EXPECT_THROW(png_write_rgb(path, test_image(), {{"", "no keyword"}}), Error);
  EXPECT_EQ(read_bytes(path), "precious");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()),
                          std::filesystem::directory_iterator()),
            1);  // no temporary left behind
}

}  // namespace
}  // namespace websd
