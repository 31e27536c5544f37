// PNG files written by hand with zlib, independently of the code under test (io/png_file.h): for
// tests of every colour type and of the reader's limits. Pure functions.
#pragma once

#include <string>

namespace websd::test {

// One chunk: length, type, data and the CRC over type and data.
std::string png_chunk(const std::string& type, const std::string& data);
// zlib's compress of `data`, as IDAT and zTXt hold it.
std::string zlib_compress(const std::string& data);
// A whole PNG: signature, IHDR, `extra_chunks` (already framed by png_chunk), one IDAT of the
// compressed `raw_rows` (each row led by its filter byte) and IEND.
std::string handmade_png(int width, int height, int bit_depth, int color_type, const std::string& raw_rows,
                         const std::string& extra_chunks = "");

}  // namespace websd::test
