#include "artifact_test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "artifact/artifact_hex.h"
#include "artifact/function_signatures.h"
#include "core/error.h"

namespace websd::test {

std::vector<SampleTensor> sample_tensors() {
  const std::vector<std::tuple<std::string, Shape, DType>> specs = {{"text.embed", {2, 4}, DType::kF32},
                                                                    {"text.norm", {20}, DType::kF16},
                                                                    {"unet.big", {10, 10}, DType::kF32},
                                                                    {"unet.bias", {64}, DType::kBF16},
                                                                    {"vae.scale", {4, 4}, DType::kF32}};
  std::vector<SampleTensor> tensors;
  for (std::size_t t = 0; t < specs.size(); ++t) {
    const auto& [name, shape, dtype] = specs[t];
    std::vector<std::byte> bytes(shape_numel(shape) * dtype_size(dtype));
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>((i * 7 + t * 31) & 0xff);
    tensors.push_back({name, shape, dtype, std::move(bytes)});
  }
  return tensors;
}

void write_sample_artifact(const std::string& dir, std::optional<artifact::ArtifactKey> key,
                           const std::string& target) {
  artifact::ArtifactWriter writer(dir, target, {kSmallShardLimit, std::move(key)});
  for (const auto& tensor : sample_tensors()) writer.add_weight(tensor.name, tensor.shape, tensor.dtype, tensor.bytes);
  artifact::FunctionSignature unet{
      "unet", {{"sample", "f32", {2, 4, 8, 8}}, {"timestep", "f32", {1}}}, {{"noise", "f32", {2, 4, 8, 8}}}, 42, 65536};
  writer.set_section(std::string(artifact::kFunctionsSection), artifact::functions_section_to_json({unet}));
  writer.finish();
}

artifact::ArtifactOpenOptions open_options(const std::string& target, const std::string& key_file) {
  artifact::ArtifactOpenOptions options;
  options.expected_target = target;
  if (!key_file.empty()) options.key_file = key_file;
  return options;
}

artifact::ArtifactKey sample_key(std::uint8_t salt) {
  artifact::ArtifactKey key;
  for (std::size_t i = 0; i < key.bytes.size(); ++i) key.bytes[i] = static_cast<std::uint8_t>(i + salt);
  return key;
}

std::string write_hex_key_file(const std::string& dir, const artifact::ArtifactKey& key) {
  const std::string path = dir + "/key-" + artifact::hex_encode(key.bytes).substr(0, 8) + ".hex";
  write_text(path, artifact::hex_encode(key.bytes) + "\n");
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << text;
  if (!stream) throw std::runtime_error("cannot write " + path);
}

void edit_manifest(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json manifest = nlohmann::json::parse(read_text(dir + "/manifest.json"));
  edit(manifest);
  write_text(dir + "/manifest.json", manifest.dump(2));
}

void edit_index_consistently(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json index = nlohmann::json::parse(read_text(dir + "/weights/index.json"));
  edit(index);
  const std::string text = index.dump(1);
  write_text(dir + "/weights/index.json", text);
  const auto digest = artifact::sha256({reinterpret_cast<const std::byte*>(text.data()), text.size()});
  edit_manifest(dir, [&](nlohmann::json& manifest) {
    manifest["sections"]["weights"]["index_sha256"] = artifact::hex_encode(digest);
  });
}

void flip_byte(const std::string& path, std::size_t offset) {
  std::string bytes = read_text(path);
  bytes.at(offset) = static_cast<char>(bytes.at(offset) ^ 0x01);
  write_text(path, bytes);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    EXPECT_EQ(message.rfind("[artifact] ", 0), 0u) << message;
    return message;
  }
  ADD_FAILURE() << "expected a websd::Error";
  return "";
}

}  // namespace websd::test
