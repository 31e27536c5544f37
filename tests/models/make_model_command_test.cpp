// `websd make-model` as a user runs it: the tiny checkpoint loads back with exactly the parameter lists
// of its configs, finite PyTorch-like values, byte-identical files for one seed, and one clear error
// line for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/dtype.h"
#include "io/json_file.h"
#include "io/safetensors_reader.h"
#include "models/model_params.h"
#include "models/model_presets.h"
#include "models/tokenizer_folder.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

std::string slurp(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

// Relative path -> content of every file under `root`.
std::map<std::string, std::string> folder_contents(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) out[fs::relative(entry.path(), root).string()] = slurp(entry.path());
  }
  return out;
}

// Gives each test fresh folders and removes them afterwards (each tiny checkpoint is a few MB).
class MakeModel : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const auto& dir : dirs_) fs::remove_all(dir);
  }

  std::string temp_dir() { return dirs_.emplace_back(test::make_temp_dir("make-model")); }

  std::string make_tiny(const std::string& seed) {
    const std::string out = temp_dir() + "/tiny";
    const auto result = test::run_websd({"make-model", "--preset", "tiny", "--out", out, "--seed", seed});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return out;
  }

 private:
  std::vector<std::string> dirs_;
};

// Checks one component's file against the parameter list of its written config.
void expect_weights_match(const fs::path& file, const std::vector<ModelParam>& params) {
  const SafetensorsFile weights(file.string());
  ASSERT_EQ(weights.entries().size(), params.size()) << file;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& entry = weights.entries()[i];
    const auto& param = params[i];
    ASSERT_EQ(entry.name, param.spec.name);
    ASSERT_EQ(entry.shape, param.spec.shape) << entry.name;
    ASSERT_EQ(entry.dtype, DType::kF16) << entry.name;
    const HostTensor values = weights.read_f32(entry.name);
    const double bound = param.fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(param.fan_in)) : 0.0;
    for (const float value : values.data) {
      ASSERT_TRUE(std::isfinite(value)) << entry.name;
      if (param.role == ParamRole::kWeight || param.role == ParamRole::kBias) {
        ASSERT_LE(std::fabs(value), bound * 1.001) << entry.name;
      }
      if (param.role == ParamRole::kNormWeight) {
        ASSERT_EQ(value, 1.0f) << entry.name;
      }
      if (param.role == ParamRole::kNormBias) {
        ASSERT_EQ(value, 0.0f) << entry.name;
      }
    }
    if (param.role == ParamRole::kEmbedding) {
      double sum_squares = 0;
      for (const float value : values.data) sum_squares += static_cast<double>(value) * value;
      EXPECT_NEAR(std::sqrt(sum_squares / static_cast<double>(values.data.size())), 0.02, 0.002) << entry.name;
    }
  }
  EXPECT_EQ(weights.metadata().at("format"), "pt");
}

TEST_F(MakeModel, TinyCheckpointLoadsBackAsItsConfigsDescribe) {
  const fs::path root = make_tiny("7");
  const auto clip = clip_config_read((root / "text_encoder/config.json").string());
  const auto unet = unet_config_read((root / "unet/config.json").string());
  const auto vae = vae_config_read((root / "vae/config.json").string());
  // The written configs parse to the fixture's architecture.
  EXPECT_EQ(clip, clip_config_read(test::fixture_path("tiny-sd15/model/text_encoder/config.json")));
  EXPECT_EQ(unet, unet_config_read(test::fixture_path("tiny-sd15/model/unet/config.json")));
  EXPECT_EQ(vae, vae_config_read(test::fixture_path("tiny-sd15/model/vae/config.json")));
  expect_weights_match(root / "text_encoder/model.safetensors", clip_text_params(clip));
  expect_weights_match(root / "unet/diffusion_pytorch_model.safetensors", unet_params(unet));
  expect_weights_match(root / "vae/diffusion_pytorch_model.safetensors", vae_params(vae));
  EXPECT_EQ(json_read_file((root / "scheduler/scheduler_config.json").string()),
            json_parse(model_preset("tiny").scheduler, "tiny"));
  EXPECT_EQ(json_read_file((root / "model_index.json").string()), json_parse(model_preset("tiny").model_index, "tiny"));
  // Nothing left beside the checkpoint (the staging folder was renamed).
  EXPECT_EQ(std::distance(fs::directory_iterator(root.parent_path()), fs::directory_iterator()), 1);
}

TEST_F(MakeModel, SameSeedIsByteIdenticalAndAnotherSeedDiffers) {
  const auto first = folder_contents(make_tiny("42"));
  const auto again = folder_contents(make_tiny("42"));
  const auto other = folder_contents(make_tiny("43"));
  EXPECT_EQ(first.size(), 12u);
  EXPECT_TRUE(first == again);
  for (const char* weights : {"text_encoder/model.safetensors", "unet/diffusion_pytorch_model.safetensors",
                              "vae/diffusion_pytorch_model.safetensors"}) {
    EXPECT_NE(first.at(weights), other.at(weights)) << weights;
    EXPECT_EQ(first.at(weights).size(), other.at(weights).size()) << weights;
  }
  EXPECT_EQ(first.at("unet/config.json"), other.at("unet/config.json"));
}

TEST_F(MakeModel, MinimalTokenizerIsByteLevelClipWithoutMerges) {
  const fs::path root = make_tiny("1");
  const auto vocab = json_read_file((root / "tokenizer/vocab.json").string());
  EXPECT_EQ(vocab.size(), 514u);
  EXPECT_EQ(vocab.at("!"), 0);           // CLIP's order: printable bytes first
  EXPECT_EQ(vocab.at("\xc4\x80"), 188);  // U+0100 stands for byte 0
  EXPECT_EQ(vocab.at("!</w>"), 256);
  EXPECT_EQ(vocab.at("<|startoftext|>"), 512);
  EXPECT_EQ(vocab.at("<|endoftext|>"), 513);
  EXPECT_EQ(slurp(root / "tokenizer/merges.txt"), "#version: 0.2\n");
  const auto config = json_read_file((root / "tokenizer/tokenizer_config.json").string());
  EXPECT_EQ(config.at("pad_token"), "<|endoftext|>");
  EXPECT_EQ(config.at("model_max_length"), 77);
  EXPECT_EQ(json_read_file((root / "tokenizer/special_tokens_map.json").string()).at("pad_token"), "<|endoftext|>");
}

TEST_F(MakeModel, CopiesATokenizerFolder) {
  const std::string out = temp_dir() + "/tiny";
  const std::string source = test::fixture_path("clip-tokenizer-sd2");
  const auto result = test::run_websd({"make-model", "--preset", "tiny", "--out", out, "--tokenizer", source});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  int copied = 0;
  for (const char* name : kTokenizerFileNames) {
    const fs::path from = fs::path(source) / name;
    if (!fs::exists(from)) continue;
    EXPECT_EQ(slurp(fs::path(out) / "tokenizer" / name), slurp(from)) << name;
    ++copied;
  }
  EXPECT_EQ(copied, 5);
}

TEST_F(MakeModel, ProgressGoesToStderrPerComponent) {
  const std::string out = temp_dir() + "/tiny";
  const auto result = test::run_websd({"make-model", "--preset", "tiny", "--out", out});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.out.empty());
  for (const char* component :
       {"make-model: text_encoder:", "make-model: unet:", "make-model: vae:", "make-model: tokenizer:"}) {
    EXPECT_NE(result.err.find(component), std::string::npos) << result.err;
  }
}

TEST_F(MakeModel, BadInputIsOneErrorLine) {
  const std::string dir = temp_dir();
  auto result = test::run_websd({"make-model", "--preset", "sd3", "--out", dir + "/x"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("unknown model preset 'sd3'"), std::string::npos) << result.err;

  result = test::run_websd({"make-model", "--preset", "tiny"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("--out"), std::string::npos) << result.err;

  std::ofstream(dir + "/occupied.txt") << "keep me";
  result = test::run_websd({"make-model", "--preset", "tiny", "--out", dir});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("not empty (pass --force"), std::string::npos) << result.err;

  result = test::run_websd({"make-model", "--preset", "tiny", "--out", dir + "/occupied.txt"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("not a folder"), std::string::npos) << result.err;

  const std::string empty_tokenizer = temp_dir();
  result = test::run_websd({"make-model", "--preset", "tiny", "--out", dir + "/y", "--tokenizer", empty_tokenizer});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("no tokenizer files"), std::string::npos) << result.err;
  // A failed run leaves neither the destination nor its staging folder behind.
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, (std::vector<std::string>{"occupied.txt"}));
}

TEST_F(MakeModel, ForceReplacesANonEmptyFolder) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/stale.txt") << "old";
  const auto result = test::run_websd({"make-model", "--preset", "tiny", "--out", dir, "--force"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(dir + "/stale.txt"));
  EXPECT_TRUE(fs::exists(dir + "/unet/diffusion_pytorch_model.safetensors"));
}

}  // namespace
}  // namespace websd
