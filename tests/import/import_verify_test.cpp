// `websd import --model M --verify` runs every check that `websd generate --model M` runs when it
// loads the checkpoint (network configs, every tensor against the networks, scheduler, tokenizer)
// and reads every value; plain `import` reads headers only and keeps accepting what it accepts today.
// Each case breaks one thing in a copy of the tiny-sd15 fixture model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

// A writable copy of the fixture model folder (the fixture itself is read-only and never touched).
std::string copy_fixture_model(const std::string& tag) {
  const fs::path from = test::fixture_path("tiny-sd15/model");
  const fs::path to = fs::path(test::make_temp_dir(tag)) / "model";
  for (const auto& entry : fs::recursive_directory_iterator(from)) {
    const fs::path target = to / fs::relative(entry.path(), from);
    if (entry.is_directory()) {
      fs::create_directories(target);
    } else {
      fs::create_directories(target.parent_path());
      fs::copy_file(entry.path(), target);
      fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add);
    }
  }
  return to.string();
}

std::string read_text(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

void edit_json(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json value = nlohmann::json::parse(read_text(path));
  edit(value);
  write_text(path, value.dump(2));
}

struct StoredTensor {
  std::string name;
  DType dtype;
  Shape shape;
  std::vector<std::byte> bytes;
};

// Reads every tensor of a safetensors file, lets `edit` change the list, writes it back.
void edit_tensors(const std::string& path, const std::function<void(std::vector<StoredTensor>&)>& edit) {
  std::vector<StoredTensor> tensors;
  {
    const SafetensorsFile file(path);
    for (const auto& entry : file.entries()) {
      const auto bytes = file.bytes(entry);
      tensors.push_back({entry.name, entry.dtype, entry.shape, {bytes.begin(), bytes.end()}});
    }
  }
  edit(tensors);
  std::vector<SafetensorsTensorView> views;
  for (const auto& tensor : tensors) views.push_back({tensor.name, tensor.dtype, tensor.shape, tensor.bytes});
  safetensors_write(path, views, {{"format", "pt"}});
}

StoredTensor& find_tensor(std::vector<StoredTensor>& tensors, const std::string& name) {
  const auto it = std::find_if(tensors.begin(), tensors.end(), [&](const auto& t) { return t.name == name; });
  if (it == tensors.end()) throw std::runtime_error("no tensor " + name);
  return *it;
}

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// Exit 1, and stderr exactly one "websd: error: " line holding every part.
void expect_one_error_line(const test::CommandResult& result, const std::vector<std::string>& parts) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_EQ(result.err.rfind("websd: error: ", 0), 0u) << result.err;
  for (const auto& part : parts)
    EXPECT_NE(result.err.find(part), std::string::npos) << result.err << "\nlacks: " << part;
}

// Plain import still accepts `dir` (headers only, as fast as before); --verify refuses it.
void expect_only_verify_fails(const std::string& dir, const std::vector<std::string>& parts) {
  const auto plain = test::run_websd({"import", "--model", dir});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  expect_one_error_line(test::run_websd({"import", "--model", dir, "--verify"}), parts);
}

TEST(ImportVerify, TheFixturePassesEveryCheck) {
  const std::string dir = copy_fixture_model("verify-ok");
  const auto text = test::run_websd({"import", "--model", dir, "--verify"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("verify: configs, tensors, scheduler, tokenizer, values (every check 'websd generate "
                          "--model' runs at load, and every value read): passed\n"),
            std::string::npos)
      << text.out;
  const auto json = test::run_websd({"import", "--model", dir, "--verify", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto summary = nlohmann::json::parse(json.out);
  EXPECT_EQ(summary.at("checks"), nlohmann::json::array({"configs", "tensors", "scheduler", "tokenizer", "values"}));
  EXPECT_EQ(summary.at("verified"), true);
  // Without --verify nothing is checked beyond the headers, and the summary says nothing about it.
  const auto plain = nlohmann::json::parse(test::run_websd({"import", "--model", dir, "--json"}).out);
  EXPECT_FALSE(plain.contains("checks"));
  EXPECT_FALSE(plain.contains("verified"));
}

TEST(ImportVerify, HelpSaysItRunsWhatGenerateRuns) {
  const auto help = test::run_websd({"import", "--help"});
  EXPECT_NE(help.out.find("Run every check that 'websd generate --model' runs when it loads"), std::string::npos)
      << help.out;
}

TEST(ImportVerify, WrongTypedConfigValue) {
  const std::string dir = copy_fixture_model("verify-type");
  edit_json(dir + "/unet/config.json", [](nlohmann::json& config) { config["layers_per_block"] = "two"; });
  expect_only_verify_fails(dir, {dir + "/unet/config.json", "layers_per_block"});
}

TEST(ImportVerify, ZeroGroups) {
  const std::string dir = copy_fixture_model("verify-groups");
  edit_json(dir + "/vae/config.json", [](nlohmann::json& config) { config["norm_num_groups"] = 0; });
  expect_only_verify_fails(dir, {dir + "/vae/config.json", "norm_num_groups"});
}

TEST(ImportVerify, MissingTensor) {
  const std::string dir = copy_fixture_model("verify-missing");
  edit_tensors(dir + "/vae/diffusion_pytorch_model.safetensors", [](std::vector<StoredTensor>& tensors) {
    std::erase_if(tensors, [](const StoredTensor& t) { return t.name == "decoder.conv_in.bias"; });
  });
  expect_only_verify_fails(dir, {"vae", "decoder.conv_in.bias", "missing"});
}

TEST(ImportVerify, WrongShapeTensor) {
  const std::string dir = copy_fixture_model("verify-shape");
  edit_tensors(dir + "/unet/diffusion_pytorch_model.safetensors", [](std::vector<StoredTensor>& tensors) {
    StoredTensor& bias = find_tensor(tensors, "conv_in.bias");
    bias.shape = {1, bias.shape.at(0)};  // the same bytes, another shape
  });
  expect_only_verify_fails(dir, {"unet", "conv_in.bias"});
}

TEST(ImportVerify, WeightsOfAnotherComponent) {
  const std::string dir = copy_fixture_model("verify-swapped");
  fs::copy_file(dir + "/unet/diffusion_pytorch_model.safetensors", dir + "/vae/diffusion_pytorch_model.safetensors",
                fs::copy_options::overwrite_existing);
  expect_only_verify_fails(dir, {"vae/diffusion_pytorch_model.safetensors"});
}

TEST(ImportVerify, BrokenSchedulerConfig) {
  const std::string dir = copy_fixture_model("verify-scheduler");
  const std::string path = dir + "/scheduler/scheduler_config.json";
  edit_json(path, [](nlohmann::json& config) { config["beta_schedule"] = "no_such_schedule"; });
  expect_only_verify_fails(dir, {path, "beta_schedule"});
  // Text that is not JSON at all is refused by opening already, with or without --verify.
  write_text(path, "{\"_class_name\": \"PNDMScheduler\",");
  expect_one_error_line(test::run_websd({"import", "--model", dir}), {path});
  expect_one_error_line(test::run_websd({"import", "--model", dir, "--verify"}), {path});
}

TEST(ImportVerify, MissingSchedulerConfig) {
  const std::string dir = copy_fixture_model("verify-noscheduler");
  fs::remove(dir + "/scheduler/scheduler_config.json");
  expect_only_verify_fails(dir, {dir + "/scheduler/scheduler_config.json does not exist"});
}

TEST(ImportVerify, BrokenTokenizer) {
  const std::string dir = copy_fixture_model("verify-tokenizer");
  const std::string path = dir + "/tokenizer/tokenizer.json";
  const std::string text = read_text(path);
  write_text(path, text.substr(0, text.size() / 2));
  expect_only_verify_fails(dir, {"tokenizer.json"});
}

TEST(ImportVerify, NonFiniteWeights) {
  const std::string dir = copy_fixture_model("verify-nan");
  edit_tensors(dir + "/vae/diffusion_pytorch_model.safetensors", [](std::vector<StoredTensor>& tensors) {
    StoredTensor& bias = find_tensor(tensors, "decoder.conv_in.bias");
    ASSERT_EQ(bias.dtype, DType::kF16);
    const std::uint16_t infinity = 0x7C00;
    std::memcpy(bias.bytes.data() + 2, &infinity, 2);  // element 1
  });
  const auto result = test::run_websd({"import", "--model", dir, "--verify"});
  expect_one_error_line(result, {"vae/diffusion_pytorch_model.safetensors: tensor 'decoder.conv_in.bias' holds 1 "
                                 "non-finite values (first at flat index 1)"});
  EXPECT_NE(result.out.find("1 tensor(s) with non-finite values"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("): FAILED (non-finite values)\n"), std::string::npos) << result.out;
  EXPECT_EQ(test::run_websd({"import", "--model", dir}).exit_code, 0);  // headers alone look fine
}

}  // namespace
}  // namespace websd
