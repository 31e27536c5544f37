// The input rule (io/input_file.h) as users meet it, through the real binary: a FIFO, a device or an
// oversized file given to any input of any command is refused at once with one error line naming
// what it is, never hangs (every run has a deadline) and never costs the file's size in memory;
// make-model --tokenizer checks what it copies; the PNG reader names the limit a file exceeds.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/cli_checks.h"
#include "support/fixtures.h"
#include "support/handmade_png.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

// Long enough for a command that loads the tiny model on a busy machine; a hang runs into it.
constexpr std::chrono::milliseconds kDeadline{60'000};

CommandResult run(const Args& args) { return run_websd(args, "", kDeadline); }

// Replaces `path` (or creates it) with a FIFO that nobody writes.
std::string make_fifo(const std::string& path) {
  fs::remove(path);
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

Args generate(const std::string& model, const std::string& out, const Args& more = {}) {
  Args args = {"generate", "--model", model, "--prompt", "a boat", "--steps", "1", "--seed", "1", "--out", out};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// A key file and the fixture's artifact encrypted with it, built once per process.
struct EncryptedArtifact {
  std::string dir, key;
};
const EncryptedArtifact& encrypted_artifact() {
  static const EncryptedArtifact made = [] {
    const std::string dir = make_temp_dir("input-rule-art");
    const std::string key = write_file(dir + "/key", std::string(64, 'a') + "\n");
    const CommandResult built = run_websd(
        {"build", "--model", fixture_model(), "--target", "cpu", "--encrypt-key-file", key, "--out", dir + "/art"});
    EXPECT_EQ(built.exit_code, 0) << built.err;
    return EncryptedArtifact{dir + "/art", key};
  }();
  return made;
}

// The fixture converted to one .safetensors file, made once per process.
const std::string& single_file_model() {
  static const std::string path = [] {
    const std::string file = make_temp_dir("input-rule-single") + "/model.safetensors";
    const CommandResult converted =
        run_websd({"convert", "--model", fixture_model(), "--to", "single-file", "--out", file});
    EXPECT_EQ(converted.exit_code, 0) << converted.err;
    return file;
  }();
  return path;
}

TEST(InputRuleCli, AFifoGivenToAnOptionIsRefusedAtOnce) {
  const std::string dir = make_temp_dir("input-rule-fifo");
  const std::string fifo = make_fifo(dir + "/pipe");
  const std::string out = dir + "/out.png";
  const EncryptedArtifact& encrypted = encrypted_artifact();
  const std::vector<std::pair<Args, std::string>> cases = {
      {generate(fixture_model(), out, {"--init-image", fifo}), "is a FIFO, expected a PNG file"},
      {generate(fixture_model(), out, {"--init-latents", fifo}), "is a FIFO, expected a safetensors file"},
      {generate(fixture_model(), out, {"--scheduler-config", fifo}), "is a FIFO, expected a JSON file"},
      {generate(fixture_model(), out, {"--tuning-db", fifo}), "is a FIFO, expected a tuning database"},
      {{"generate", "--artifact", encrypted.dir, "--key-file", fifo, "--prompt", "x", "--steps", "1", "--out", out},
       "is a FIFO, expected a key file"},
      {{"inspect", encrypted.dir, "--key-file", fifo}, "is a FIFO, expected a key file"},
      {{"profile", "--artifact", encrypted.dir, "--key-file", fifo}, "is a FIFO, expected a key file"},
      {{"build", "--model", fixture_model(), "--target", "cpu", "--encrypt-key-file", fifo, "--out", dir + "/a"},
       "is a FIFO, expected a key file"},
      {{"build", "--model", fixture_model(), "--target", "cpu", "--tuning-db", fifo, "--out", dir + "/b"},
       "is a FIFO, expected a tuning database"},
      {{"bench", "--model", fixture_model(), "--tuning-db", fifo, "--runs", "1"}, "is a FIFO, expected a tuning"},
      {{"import", "--model", fixture_model(), "--scheduler-config", fifo}, "is a FIFO, expected a JSON file"},
      {{"convert", "--model", fixture_model(), "--scheduler-config", fifo, "--out", dir + "/c"},
       "is a FIFO, expected a JSON file"},
      {{"scheduler", "--config", fifo, "--steps", "2"}, "is a FIFO, expected a JSON file"},
      {{"import", "--model", single_file_model(), "--config", fifo},
       "--config " + fifo + ": is a FIFO, expected an LDM inference config (YAML)"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args[0] + " " + args[args.size() - 2] + " " + args.back());
    expect_error(run(args), {fifo, message});
  }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(fs::exists(out));
}

TEST(InputRuleCli, AFifoInsideAModelFolderIsRefusedAtOnce) {
  for (const auto& [file, expected] : std::vector<std::pair<std::string, std::string>>{
           {"model_index.json", "is a FIFO, expected a JSON file"},
           {"unet/config.json", "is a FIFO, expected a JSON file"},
           {"unet/diffusion_pytorch_model.safetensors", "is a FIFO, expected a safetensors file"},
           {"scheduler/scheduler_config.json", "is a FIFO, expected a JSON file"},
           {"tokenizer/tokenizer.json", "is a FIFO, expected a tokenizer file"},
           {"tokenizer/tokenizer_config.json", "is a FIFO, expected a JSON file"}}) {
    SCOPED_TRACE(file);
    const std::string model = copy_fixture("tiny-sd15/model", "input-rule-model");
    const std::string fifo = make_fifo(model + "/" + file);
    const std::string out = make_temp_dir("input-rule-model-out") + "/out.png";
    expect_error(run(generate(model, out)), {fifo, expected});
  }
}

TEST(InputRuleCli, AFifoInsideATokenizerFolderIsRefusedByEveryCommand) {
  for (const std::string file : {"vocab.json", "merges.txt", "special_tokens_map.json"}) {
    SCOPED_TRACE(file);
    const std::string tokenizer = copy_fixture("clip-tokenizer", "input-rule-tokenizer");
    const std::string fifo = make_fifo(tokenizer + "/" + file);
    const std::string expected =
        file == "special_tokens_map.json" ? "is a FIFO, expected a JSON file" : "is a FIFO, expected a tokenizer file";
    const std::string dir = make_temp_dir("input-rule-tokenizer-out");
    expect_error(run({"tokenize", "--tokenizer", tokenizer, "a boat"}), {fifo, expected});
    expect_error(run(generate(fixture_model(), dir + "/out.png", {"--tokenizer", tokenizer})), {fifo, expected});
    expect_error(run({"import", "--model", fixture_model(), "--tokenizer", tokenizer, "--verify"}), {fifo, expected});
    // Copied by make-model: refused, not skipped (the output folder is never made).
    expect_error(run({"make-model", "--preset", "tiny", "--out", dir + "/m", "--tokenizer", tokenizer}),
                 {fifo, expected});
    EXPECT_FALSE(fs::exists(dir + "/m"));
  }
}

TEST(InputRuleCli, DevicesAndTerminalsOrPipesAsFilesAreRefused) {
  const std::string dir = make_temp_dir("input-rule-device");
  expect_error(run(generate(fixture_model(), dir + "/a.png", {"--scheduler-config", "/dev/zero"})),
               {"/dev/zero: is a device, expected a JSON file"});
  expect_error(run(generate(fixture_model(), dir + "/b.png", {"--init-image", "/dev/zero"})),
               {"/dev/zero: is a device, expected a PNG file"});
  // /dev/stdin when standard input is a pipe: a FIFO, refused (no command reads a config from stdin).
  const std::string command = "printf '{}' | timeout 60 '" + websd_binary() + "' generate --model '" + fixture_model() +
                              "' --prompt x --steps 1 --scheduler-config /dev/stdin --out '" + dir + "/c.png' 2>'" +
                              dir + "/err.txt'";
  const int status = std::system(("bash -c \"" + command + "\"").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream err_file(dir + "/err.txt");
  const std::string err((std::istreambuf_iterator<char>(err_file)), {});
  EXPECT_NE(err.find("/dev/stdin: is a FIFO, expected a JSON file"), std::string::npos) << err;
}

TEST(InputRuleCli, AHugeConfigIsRefusedByItsSizeBeforeItIsRead) {
  const std::string model = copy_fixture("tiny-sd15/model", "input-rule-huge");
  const std::string config = model + "/unet/config.json";
  write_file(config, "{");
  fs::resize_file(config, 200'000'000);  // sparse: no disk space, but 200 MB to read and parse
  const auto start = std::chrono::steady_clock::now();
  const CommandResult result = run({"import", "--model", model});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  expect_error(result, {config + ": holds 200000000 bytes, over websd's cap of 4 MiB for a JSON file"});
  // Refused before reading: websd's peak memory stays far below the file's 200 MB.
  EXPECT_LT(result.peak_rss_bytes, 150'000'000) << result.peak_rss_bytes;
}

TEST(InputRuleCli, AnOversizedKeyFileIsRefusedNamingTheCap) {
  const std::string dir = make_temp_dir("input-rule-key");
  const std::string big = write_file(dir + "/big.key", std::string(5000, 'a'));
  expect_error(run({"inspect", encrypted_artifact().dir, "--key-file", big}),
               {big + ": holds 5000 bytes, over websd's cap of 4 KiB for a key file"});
  // A folder passed as a key file keeps its message.
  expect_error(run({"inspect", encrypted_artifact().dir, "--key-file", dir}),
               {dir + ": is a folder, expected a key file"});
}

TEST(InputRuleCli, MakeModelRefusesABrokenTokenizerNamingTheFile) {
  const std::string tokenizer = copy_fixture("clip-tokenizer", "input-rule-tokenizer");
  write_file(tokenizer + "/vocab.json", "this is not json");
  const std::string out = make_temp_dir("input-rule-tokenizer-out") + "/m";
  expect_error(run({"make-model", "--preset", "tiny", "--out", out, "--tokenizer", tokenizer}),
               {tokenizer + "/vocab.json"});
  EXPECT_FALSE(fs::exists(out));
  // A good one is copied as it was.
  const std::string good = fixture_path("clip-tokenizer");
  ASSERT_EQ(run({"make-model", "--preset", "tiny", "--out", out, "--tokenizer", good}).exit_code, 0);
  std::ifstream copied(out + "/tokenizer/vocab.json"), original(good + "/vocab.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(copied), {}),
            std::string(std::istreambuf_iterator<char>(original), {}));
}

TEST(InputRuleCli, PngLimitsAreNamedWithTheValue) {
  const std::string dir = make_temp_dir("input-rule-png");
  const std::string pixel = std::string("\0\x01\x02\x03", 4);
  const std::string wide = write_file(dir + "/wide.png", handmade_png(20000, 20000, 8, 2, pixel));
  std::string many_texts;
  for (int i = 0; i < 100'000; ++i) many_texts += png_chunk("tEXt", std::string("k\0v", 3));
  const std::string texts = write_file(dir + "/texts.png", handmade_png(1, 1, 8, 2, pixel, many_texts));
  // 100 MiB of text in a zTXt chunk of about 100 KB.
  const std::string inflated = std::string("k\0\0", 3) + zlib_compress(std::string(100 << 20, 'a'));
  const std::string bomb = write_file(dir + "/bomb.png", handmade_png(1, 1, 8, 2, pixel, png_chunk("zTXt", inflated)));
  const std::string huge_chunk = write_file(
      dir + "/chunk.png", handmade_png(1, 1, 8, 2, pixel, png_chunk("tEXt", "k" + std::string(65 << 20, '\0'))));
  for (const auto& [file, parts] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {wide, {"the image is 20000x20000 pixels", "at most 16384 a side"}},
           {texts, {"holds 100000 text chunks, more than the 1000 websd reads"}},
           {bomb, {"more than 64 MiB once decompressed"}},
           {huge_chunk, {"its tEXt chunk holds 68157441 bytes, more than the 64 MiB websd reads of one chunk"}}}) {
    SCOPED_TRACE(file);
    const CommandResult result =
        run(generate(fixture_model(), dir + "/out.png", {"--init-image", file, "--strength", "0.5"}));
    expect_error(result, {"[png] " + file});
    for (const auto& part : parts) EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("truncated or corrupt"), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace websd::test
