// Broken checkpoint folders: each open fails with one websd::Error that names the file (and the
// tensor where there is one) and says how to fix it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>

#include "core/error.h"
#include "import/checkpoint_folder.h"
#include "import/diffusers_checkpoint.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

void expect_open_error(const std::string& dir, std::initializer_list<std::string> parts,
                       const ImportOptions& options = {}) {
  try {
    (void)DiffusersCheckpoint::open(dir, options);
    FAIL() << "no error for " << dir;
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
  }
}

TEST(CheckpointErrors, FolderOrModelIndexMissing) {
  const std::string dir = test::make_temp_dir("ckpt-empty");
  expect_open_error(dir + "/nope", {dir + "/nope: no such file or folder"});
  // A file is read as a single-file checkpoint: one that is not safetensors says so.
  test::write_text(dir + "/file", "x");
  expect_open_error(dir + "/file", {dir + "/file"});
  expect_open_error(dir, {dir + "/model_index.json: missing"});
}

TEST(CheckpointErrors, ModelIndexThatIsNotUsable) {
  const std::string dir = test::make_temp_dir("ckpt-index");
  test::write_text(dir + "/model_index.json", "{\"unet\": [\"diffusers\"");
  expect_open_error(dir, {dir + "/model_index.json"});
  test::write_json(dir + "/model_index.json", {{"unet", {"diffusers", 3}}});
  expect_open_error(dir, {"component 'unet' is not a [library, class] pair"});
  test::write_json(dir + "/model_index.json", {{"_class_name", "StableDiffusionPipeline"}});
  expect_open_error(dir, {"lists no components"});
  test::write_json(dir + "/model_index.json", {{"unet", {"diffusers", "UNet2DConditionModel"}}});
  expect_open_error(dir, {"component 'unet' (UNet2DConditionModel) has no folder " + dir + "/unet"});
}

TEST(CheckpointErrors, MissingOptionalComponentFoldersAreLeftOut) {
  const auto dir = test::write_checkpoint_folder("ckpt-optional");
  nlohmann::json index = nlohmann::json::parse(std::ifstream(dir + "/model_index.json"));
  index["safety_checker"] = {"stable_diffusion", "StableDiffusionSafetyChecker"};
  index["feature_extractor"] = {"transformers", "CLIPImageProcessor"};
  test::write_json(dir + "/model_index.json", index);
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  EXPECT_EQ(checkpoint.find("safety_checker"), nullptr);
  EXPECT_EQ(checkpoint.find("feature_extractor"), nullptr);
  fs::remove_all(dir + "/unet");  // a required one is still an error
  expect_open_error(dir, {"component 'unet' (UNet2DConditionModel) has no folder " + dir + "/unet"});
}

TEST(CheckpointErrors, MissingConfig) {
  const auto dir = test::write_checkpoint_folder("ckpt-noconfig");
  fs::remove(dir + "/unet/config.json");
  expect_open_error(dir, {dir + "/unet/config.json: missing", "UNet2DConditionModel"});
}

TEST(CheckpointErrors, MissingWeights) {
  const auto dir = test::write_checkpoint_folder("ckpt-noweights");
  fs::remove(dir + "/vae/diffusion_pytorch_model.safetensors");
  expect_open_error(dir, {dir + "/vae: no weights: expected diffusion_pytorch_model.safetensors or model.safetensors"});
}

TEST(CheckpointErrors, PickleOnlyWeightsSayHowToConvert) {
  const auto dir = test::write_checkpoint_folder("ckpt-pickle");
  fs::remove(dir + "/unet/diffusion_pytorch_model.safetensors");
  test::write_text(dir + "/unet/diffusion_pytorch_model.bin", "PK\x03\x04 pickle");
  expect_open_error(dir, {dir + "/unet/diffusion_pytorch_model.bin: PyTorch pickle weights",
                          "websd reads only safetensors", "save_pretrained(\"OUT\", safe_serialization=True)"});
}

TEST(CheckpointErrors, SeveralVariantsNeedAChoice) {
  const auto dir = test::write_checkpoint_folder("ckpt-variants", {.variant = "fp16"});
  fs::copy_file(dir + "/vae/diffusion_pytorch_model.fp16.safetensors",
                dir + "/vae/diffusion_pytorch_model.bf16.safetensors");
  expect_open_error(dir, {dir + "/vae: holds several weight variants (bf16, fp16)", "--variant"});
  EXPECT_NO_THROW((void)DiffusersCheckpoint::open(dir, test::variant_options("fp16")));
  expect_open_error(dir, {"no 'int8' weights", "variants present: fp16"}, test::variant_options("int8"));
  expect_open_error(dir, {"weight variant '../x' may hold only letters"}, test::variant_options("../x"));
}

TEST(CheckpointErrors, CorruptWeightsNameTheFile) {
  const auto dir = test::write_checkpoint_folder("ckpt-trunc");
  const std::string path = dir + "/unet/diffusion_pytorch_model.safetensors";
  fs::resize_file(path, fs::file_size(path) - 10);
  expect_open_error(dir, {"[safetensors] " + path, "end past the data section"});
}

TEST(CheckpointErrors, TextEncoderWithBothSpellingsOfATensor) {
  const auto dir = test::write_checkpoint_folder("ckpt-twice");
  test::write_tensors(dir + "/text_encoder/model.safetensors",
                      {{"text_model.final_layer_norm.bias", {4}}, {"final_layer_norm.bias", {4}}});
  expect_open_error(dir, {dir + "/text_encoder/model.safetensors", "'text_model.final_layer_norm.bias'",
                          "'final_layer_norm.bias' both stand for"});
}

class BrokenIndex : public ::testing::Test {
 protected:
  std::string dir_ = test::write_checkpoint_folder("ckpt-broken-index", {.unet_shards = 2});
  std::string index_path_ = dir_ + "/unet/diffusion_pytorch_model.safetensors.index.json";
  nlohmann::json index_ = nlohmann::json::parse(std::ifstream(index_path_));
  const std::string shard1_ = "diffusion_pytorch_model-00001-of-00002.safetensors";
  const std::string shard2_ = "diffusion_pytorch_model-00002-of-00002.safetensors";
};

TEST_F(BrokenIndex, ShardMissing) {
  fs::remove(dir_ + "/unet/" + shard2_);
  expect_open_error(dir_, {index_path_ + ": weight_map puts tensor", "in shard " + shard2_, "which is missing"});
}

TEST_F(BrokenIndex, TensorAbsentFromItsShard) {
  index_["weight_map"]["conv_in.bias"] = shard1_;  // it lives in shard 2
  test::write_json(index_path_, index_);
  expect_open_error(
      dir_, {index_path_ + ": weight_map puts tensor 'conv_in.bias' in shard " + shard1_ + ", which does not hold it"});
}

TEST_F(BrokenIndex, TensorInAShardButNotInTheIndex) {
  index_["weight_map"].erase("conv_out.bias");
  test::write_json(index_path_, index_);
  expect_open_error(dir_, {index_path_ + ": shard " + shard2_ + " holds tensor 'conv_out.bias'", "does not list"});
}

TEST_F(BrokenIndex, ShardNamesMustStayInTheFolder) {
  index_["weight_map"]["conv_in.bias"] = "../../etc/passwd";
  test::write_json(index_path_, index_);
  expect_open_error(dir_, {index_path_ + ": weight_map entry for tensor 'conv_in.bias' is not a file name"});
}

TEST_F(BrokenIndex, NoWeightMap) {
  test::write_json(index_path_, {{"metadata", {{"total_size", 1}}}});
  expect_open_error(dir_, {index_path_ + ": has no \"weight_map\" object"});
  test::write_json(index_path_, {{"weight_map", nlohmann::json::object()}});
  expect_open_error(dir_, {"lists no tensors"});
}

}  // namespace
}  // namespace websd
