// The input rule (io/input_file.h): regular files only, opened without blocking, a size cap per kind
// checked before reading, standard input only through input_file_read_or_stdin's "-".
#include "io/input_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using test::error_of;

constexpr InputKind kSmall{"a test file", 16};

void expect_parts(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
}

std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Standard input replaced by `fd` for the life of the object.
class StdinFrom {
 public:
  explicit StdinFrom(int fd) : saved_(::dup(STDIN_FILENO)) { ::dup2(fd, STDIN_FILENO); }
  ~StdinFrom() {
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
  }

 private:
  int saved_;
};

TEST(InputFile, ReadsARegularFileWhole) {
  const std::string dir = test::make_temp_dir("input-read");
  const std::string text = std::string("line 1\n\0binary\xff", 15);
  EXPECT_EQ(input_file_read("test", write_file(dir + "/a", text), kSmall), text);
  EXPECT_EQ(input_file_read("test", write_file(dir + "/empty", ""), kSmall), "");
  InputFile file("test", dir + "/a", kSmall, "--option");
  EXPECT_EQ(file.size(), text.size());
  EXPECT_EQ(file.where(), "--option " + dir + "/a");
  EXPECT_EQ(file.read_prefix(4), "line");
  EXPECT_EQ(file.read_all(), text.substr(4));
  InputFile bytes("test", dir + "/a", kSmall);
  EXPECT_EQ(bytes.read_all_bytes().size(), text.size());
}

TEST(InputFile, AFifoIsRefusedAtOnceWithoutBlocking) {
  const std::string dir = test::make_temp_dir("input-fifo");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] { input_file_read("json", fifo, input_kinds::kJsonConfig, "--config"); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  expect_parts(message, {"[json] --config " + fifo + ": is a FIFO, expected a JSON file", "regular files only"});
  expect_parts(error_of([&] { input_file_read_or_stdin("app", fifo, input_kinds::kPromptFile, "--prompt-file"); }),
               {"--prompt-file " + fifo + ": is a FIFO, expected a prompt file", "or pass - to read standard input"});
}

TEST(InputFile, FoldersDevicesAndSocketsAreNamed) {
  const std::string dir = test::make_temp_dir("input-kinds");
  expect_parts(error_of([&] { input_file_read("key", dir, input_kinds::kKeyFile); }),
               {"[key] " + dir + ": is a folder, expected a key file (pass the file itself)"});
  expect_parts(error_of([] { input_file_read("png", "/dev/zero", input_kinds::kPngImage); }),
               {"/dev/zero: is a device, expected a PNG file"});
  expect_parts(error_of([] { InputFile("file", "/dev/null", input_kinds::kSafetensors); }),
               {"/dev/null: is a device, expected a safetensors file"});
  const std::string socket_path = dir + "/socket";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  expect_parts(error_of([&] { input_file_read("test", socket_path, kSmall); }),
               {socket_path + ": is a socket, expected a test file"});
  ::close(listener);
}

TEST(InputFile, MissingFilesAndLinkLoopsSayHowToFixThem) {
  const std::string dir = test::make_temp_dir("input-missing");
  expect_parts(error_of([&] { input_file_read("test", dir + "/absent", kSmall); }),
               {dir + "/absent: cannot open: No such file or directory (check that the path exists)"});
  fs::create_symlink("loop", dir + "/loop");
  expect_parts(error_of([&] { input_file_read("test", dir + "/loop", kSmall); }),
               {"Too many levels of symbolic links (a symbolic link loop: remove or fix the link)"});
}

TEST(InputFile, AFileOverItsKindsCapIsRefusedBeforeReading) {
  const std::string dir = test::make_temp_dir("input-cap");
  EXPECT_EQ(input_file_read("test", write_file(dir + "/at-cap", std::string(16, 'x')), kSmall).size(), 16u);
  expect_parts(error_of([&] { input_file_read("test", write_file(dir + "/over", std::string(17, 'x')), kSmall); }),
               {dir + "/over: holds 17 bytes, over websd's cap of 16 bytes for a test file"});
  // 200 MB of nothing (sparse): refused from its size alone, so quickly and without the memory.
  const std::string huge = dir + "/config.json";
  std::ofstream(huge) << "{";
  fs::resize_file(huge, 200'000'000);
  const auto start = std::chrono::steady_clock::now();
  expect_parts(error_of([&] { input_file_read("json", huge, input_kinds::kJsonConfig); }),
               {huge + ": holds 200000000 bytes, over websd's cap of 4 MiB for a JSON file"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(InputFile, AFileWithoutASizeIsCappedWhileRead) {
  // /proc files are regular files of size 0 whose content appears as they are read.
  expect_parts(error_of([] { input_file_read("test", "/proc/self/status", kSmall); }),
               {"/proc/self/status: holds more than 16 bytes, over websd's cap of 16 bytes for a test file"});
  EXPECT_NE(input_file_read("test", "/proc/self/status", input_kinds::kKeyFile).find("Name:"), std::string::npos);
}

TEST(InputFile, DashReadsStandardInputOnlyWhereAllowed) {
  const std::string dir = test::make_temp_dir("input-stdin");
  int pipe_fds[2] = {-1, -1};
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_EQ(::write(pipe_fds[1], "from a pipe\n", 12), 12);
  ::close(pipe_fds[1]);
  {
    const StdinFrom redirected(pipe_fds[0]);
    EXPECT_EQ(input_file_read_or_stdin("test", "-", kSmall, "--prompt-file"), "from a pipe\n");
  }
  ::close(pipe_fds[0]);
  const int big = ::open(write_file(dir + "/big", std::string(17, 'y')).c_str(), O_RDONLY);
  {
    const StdinFrom redirected(big);
    expect_parts(error_of([] { input_file_read_or_stdin("test", "-", kSmall, "--prompt-file"); }),
                 {"--prompt-file - (standard input): holds more than 16 bytes, over websd's cap"});
  }
  ::close(big);
  // Elsewhere "-" is a file name like any other.
  expect_parts(error_of([] { input_file_read("test", "-", kSmall); }), {"-: cannot open: No such file"});
}

TEST(InputFile, FileErrorFixes) {
  EXPECT_EQ(file_error_fix(ENOENT), "check that the path exists");
  EXPECT_EQ(file_error_fix(EACCES), "check the permissions");
  EXPECT_EQ(file_error_fix(EIO), "check the path");
}

}  // namespace
}  // namespace websd
