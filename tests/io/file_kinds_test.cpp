// Readers given a path that is not the file they expect (a folder, a device, a pipe, a missing or an
// oversized file) name the path and what it is, instead of "unexpected end of input" or "truncated".
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "io/json_file.h"
#include "io/mapped_file.h"
#include "io/png_file.h"
#include "io/safetensors_reader.h"
#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using test::error_of;

void expect_message(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
}

TEST(FileKinds, JsonFileThatIsAFolderOrADevice) {
  const std::string dir = test::make_temp_dir("kinds-json");
  expect_message(error_of([&] { json_read_file(dir); }), {"[json] " + dir + ": is a folder, expected a JSON file"});
  expect_message(error_of([] { json_read_file("/dev/zero"); }), {"/dev/zero: is a device, expected a JSON file"});
  expect_message(error_of([&] { json_read_file(dir + "/missing.json"); }),
                 {dir + "/missing.json: cannot open: No such file or directory"});
}

TEST(FileKinds, PngFileThatIsAFolderMissingOrTooLarge) {
  const std::string dir = test::make_temp_dir("kinds-png");
  expect_message(error_of([&] { png_read_rgb(dir); }), {"[png] " + dir + ": is a folder, expected a PNG file"});
  expect_message(error_of([&] { png_read_rgb(dir + "/missing.png"); }),
                 {dir + "/missing.png: cannot open: No such file or directory"});
  const std::string huge = dir + "/huge.png";
  std::ofstream(huge) << "\x89PNG";
  fs::resize_file(huge, (std::uintmax_t{2} << 30) + 1);  // sparse: no disk space used
  const std::string message = error_of([&] { png_read_rgb(huge); });
  expect_message(message, {huge + ": holds 2147483649 bytes, over websd's cap of 2 GiB for a PNG file"});
  EXPECT_EQ(message.find("truncated or corrupt"), std::string::npos) << message;
}

TEST(FileKinds, MappedFileThatIsAFolderOrAPipe) {
  const std::string dir = test::make_temp_dir("kinds-map");
  const auto map = [](const std::string& path) { MappedFile file(path, input_kinds::kSafetensors); };
  expect_message(error_of([&] { map(dir); }), {"[file] " + dir + ": is a folder, expected a safetensors file"});
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_message(error_of([&] { map(fifo); }), {fifo + ": is a FIFO, expected a safetensors file"});  // no hang
  expect_message(error_of([] { MappedFile file("/dev/null", input_kinds::kSafetensors); }),
                 {"/dev/null: is a device, expected a safetensors file"});
  fs::create_symlink("loop", dir + "/loop");
  expect_message(error_of([&] { map(dir + "/loop"); }), {"loop: cannot open: Too many levels of symbolic links"});
}

TEST(FileKinds, SafetensorsNamesAreQuotedThroughMessageSafe) {
  EXPECT_EQ(safetensors_quote_name("a\x1b[31m\x9b"
                                   "b"),
            "'a\\x1b[31m\\x9bb'");
  EXPECT_EQ(safetensors_quote_name(std::string(200, 'n')), "'" + std::string(160, 'n') + "...(200 bytes)'");
}

}  // namespace
}  // namespace websd
