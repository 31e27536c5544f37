// Error messages as a user meets them (issue 10): every failure is one line "websd: error: ..." on
// stderr with exit 1, naming the path and the real cause; nothing echoed can be huge or carry
// control bytes; ordinary mistakes never read "internal error".
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

// A private copy of the tiny SD 1.5 fixture that a test may break.
std::string copy_fixture_model(const std::string& tag) {
  const std::string model = make_temp_dir(tag) + "/model";
  fs::copy(fixture_path("tiny-sd15/model"), model, fs::copy_options::recursive);
  return model;
}

void edit_json(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json value;
  std::ifstream(path) >> value;
  edit(value);
  std::ofstream(path) << value.dump(2);
}

bool has_control_bytes(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && i + 1 == text.size()) continue;
    if (c < 0x20 || c == 0x7f || c == 0x9b) return true;  // C0, DEL, a raw CSI (these messages are ASCII)
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return true;  // C1
  }
  return false;
}

// Exit 1 and one error line "websd: error: ..." ending stderr (progress lines of a run may precede it),
// holding every part, free of control bytes, never an internal error.
void expect_one_error_line(const CommandResult& result, std::initializer_list<std::string> parts) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::size_t line_start = result.err.rfind('\n', result.err.size() >= 2 ? result.err.size() - 2 : 0);
  const std::string last_line = result.err.substr(line_start == std::string::npos ? 0 : line_start + 1);
  EXPECT_EQ(last_line.rfind("websd: error: ", 0), 0u) << result.err;
  EXPECT_EQ(result.err.find("websd: error: "), result.err.size() - last_line.size()) << "more than one error line";
  EXPECT_TRUE(!last_line.empty() && last_line.back() == '\n') << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
  EXPECT_FALSE(has_control_bytes(last_line)) << last_line;
  for (const auto& part : parts) EXPECT_NE(last_line.find(part), std::string::npos) << last_line;
}

std::vector<std::string> generate_args(const std::string& model, const std::string& out) {
  return {"generate", "--model", model, "--prompt", "a red house", "--steps", "1", "--seed", "1", "--out", out};
}

// Class 8: echoed values are previewed, not dumped whole.
TEST(MessagesCli, AHugeConfigValueIsPreviewedInAShortLine) {
  const std::string model = copy_fixture_model("msg-huge");
  // 3 MiB: under the 4 MiB a config file may hold (io/input_file.h), far over any echo.
  edit_json(model + "/unet/config.json", [](nlohmann::json& config) { config["act_fn"] = std::string(3 << 20, 'x'); });
  const auto result = run_websd(generate_args(model, make_temp_dir("msg-out") + "/out.png"));
  expect_one_error_line(result, {"act_fn=\"xxxx", "...(3145728 bytes)\" is not supported"});
  EXPECT_LT(result.err.size(), 2048u) << result.err.size();
}

TEST(MessagesCli, AHugeUnknownKeyIsPreviewedToo) {
  const std::string model = copy_fixture_model("msg-huge-key");
  edit_json(model + "/unet/config.json", [](nlohmann::json& config) {
    config[std::string(1 << 20, 'k')] = nlohmann::json::array({std::string(1 << 20, 'v')});
  });
  const auto result = run_websd(generate_args(model, make_temp_dir("msg-out") + "/out.png"));
  expect_one_error_line(result, {"unknown key 'kkkk", "...(1048576 bytes)'=an array of 1 values"});
  EXPECT_LT(result.err.size(), 2048u) << result.err.size();
}

TEST(MessagesCli, ControlBytesInAConfigValueArePrintedEscaped) {
  const std::string model = copy_fixture_model("msg-escape");
  // ESC [ 31 m and U+009B (CSI) as JSON escapes: parsed fine, then echoed by the config check.
  edit_json(model + "/unet/config.json", [](nlohmann::json& config) {
    config["act_fn"] =
        "\x1b[31mred\xc2\x9b"
        "2J";
  });
  const auto result = run_websd(generate_args(model, make_temp_dir("msg-out") + "/out.png"));
  expect_one_error_line(result, {"act_fn=\"\\x1b[31mred\\u009b2J\""});
}

TEST(MessagesCli, ARawC1ByteInAConfigFileIsPrintedEscaped) {
  const std::string model = copy_fixture_model("msg-raw");
  // A raw 0x9b (a terminal's one-byte CSI) is not UTF-8: the parse error quotes what it read.
  std::ofstream(model + "/unet/config.json", std::ios::binary | std::ios::trunc) << "{\"act_fn\": \"red\x9b"
                                                                                    "2J\"}";
  const auto result = run_websd(generate_args(model, make_temp_dir("msg-out") + "/out.png"));
  expect_one_error_line(result, {"[json] " + model + "/unet/config.json: ", "ill-formed UTF-8", "\"red\\x9b"});
  EXPECT_EQ(result.err.find('\x9b'), std::string::npos);
}

TEST(MessagesCli, ControlBytesInAPathArePrintedEscaped) {
  const std::string dir = make_temp_dir("msg-path");
  const std::string image = dir +
                            "/\x1b[31mred\x9b"
                            "2J.png";
  const auto result = run_websd({"generate", "--model", fixture_path("tiny-sd15/model"), "--prompt", "x", "--out",
                                 make_temp_dir("msg-out") + "/out.png", "--init-image", image});
  expect_one_error_line(result, {"\\x1b[31mred\\x9b2J.png", "No such file or directory"});
}

// Class 14: ordinary mistakes name the path and the real cause.
TEST(MessagesCli, InitImageThatIsAFolder) {
  const std::string dir = make_temp_dir("msg-init-dir");
  auto args = generate_args(fixture_path("tiny-sd15/model"), make_temp_dir("msg-out") + "/out.png");
  args.insert(args.end(), {"--init-image", dir});
  expect_one_error_line(run_websd(args), {"[png] " + dir + ": is a folder, expected a PNG file"});
}

TEST(MessagesCli, ModelFolderWithASymlinkLoop) {
  const std::string model = copy_fixture_model("msg-loop");
  fs::create_symlink("loop", model + "/loop");  // a loop websd never needs to follow: harmless
  const auto unharmed = run_websd({"import", "--model", model});
  EXPECT_EQ(unharmed.exit_code, 0) << unharmed.err;
  fs::remove(model + "/unet/config.json");
  fs::create_symlink("config.json", model + "/unet/config.json");  // a loop where a file is needed
  expect_one_error_line(
      run_websd(generate_args(model, make_temp_dir("msg-out") + "/out.png")),
      {"[file] " + model + "/unet/config.json: ", "Too many levels of symbolic links", "a symbolic link loop"});
}

TEST(MessagesCli, OutFileNameOf300Characters) {
  const std::string dir = make_temp_dir("msg-long-name");
  const std::string out = dir + "/" + std::string(300, 'n') + ".png";
  expect_one_error_line(run_websd(generate_args(fixture_path("tiny-sd15/model"), out)),
                        {"--out " + dir + "/nnnn", "the file name is 304 bytes"});
}

TEST(MessagesCli, SchedulerConfigThatIsAFolder) {
  const std::string dir = make_temp_dir("msg-sched-dir");
  auto args = generate_args(fixture_path("tiny-sd15/model"), make_temp_dir("msg-out") + "/out.png");
  args.insert(args.end(), {"--scheduler-config", dir});
  expect_one_error_line(run_websd(args), {dir + ": is a folder, expected a JSON file"});
}

TEST(MessagesCli, KeyFileThatIsAFolder) {
  const std::string dir = make_temp_dir("msg-key-dir");
  const std::string out = make_temp_dir("msg-key-out");
  const std::string model = fixture_path("tiny-sd15/model");
  expect_one_error_line(
      run_websd({"build", "--target", "cpu", "--model", model, "--encrypt-key-file", dir, "--out", out + "/a"}),
      {"[artifact] " + dir + ": is a folder, expected a key file"});
  std::ofstream(dir + "/key") << std::string(64, '7') << "\n";
  const auto built = run_websd(
      {"build", "--target", "cpu", "--model", model, "--encrypt-key-file", dir + "/key", "--out", out + "/a"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  expect_one_error_line(run_websd({"generate", "--artifact", out + "/a", "--key-file", dir, "--prompt", "x", "--steps",
                                   "1", "--out", out + "/out.png"}),
                        {"[artifact] " + dir + ": is a folder, expected a key file"});
}

TEST(MessagesCli, AHugeSampleSizeIsOneClearError) {
  const std::string model = copy_fixture_model("msg-sample-size");
  edit_json(model + "/unet/config.json", [](nlohmann::json& config) { config["sample_size"] = 1e9; });
  const auto result = run_websd(generate_args(model, make_temp_dir("msg-sample-out") + "/out.png"));
  expect_one_error_line(result, {});
  EXPECT_TRUE(result.err.find("sample_size") != std::string::npos ||
              result.err.find("exceeds websd's maximum side") != std::string::npos)
      << result.err;
}

TEST(MessagesCli, OutOfMemoryIsOneClearError) {
  // The child inherits a 3 GiB address-space limit: 2e9 floats of noise (8 GB) cannot be allocated.
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &saved), 0);
  rlimit limited = saved;
  limited.rlim_cur = std::min<rlim_t>(saved.rlim_max, rlim_t{3} << 30);
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &limited), 0);
  const auto result = run_websd(
      {"noise", "--seed", "1", "--shape", "2000000000", "--out", make_temp_dir("msg-oom") + "/noise.safetensors"});
  ::setrlimit(RLIMIT_AS, &saved);
  expect_one_error_line(result, {"[memory] out of memory", "too large?"});
}

}  // namespace
}  // namespace websd::test
