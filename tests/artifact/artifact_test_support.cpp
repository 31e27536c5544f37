#include "artifact_test_support.h"

#include <tuple>

#include "artifact/artifact_hex.h"
#include "artifact/function_signatures.h"

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

artifact::ArtifactWriterOptions small_shard_options() {
  artifact::ArtifactWriterOptions options;
  options.shard_limit_bytes = kSmallShardLimit;
  return options;
}

void write_sample_artifact(const std::string& dir, std::optional<artifact::ArtifactKey> key, const std::string& target,
                           std::shared_ptr<const artifact::ArtifactSigningKey> signing_key) {
  artifact::ArtifactWriterOptions options = small_shard_options();
  options.key = std::move(key);
  options.signing_key = std::move(signing_key);
  artifact::ArtifactWriter writer(dir, target, std::move(options));
  for (const auto& tensor : sample_tensors()) writer.add_weight(tensor.name, tensor.shape, tensor.dtype, tensor.bytes);
  artifact::FunctionSignature unet{
      "unet", {{"sample", "f32", {2, 4, 8, 8}}, {"timestep", "f32", {1}}}, {{"noise", "f32", {2, 4, 8, 8}}}, 42, 65536};
  writer.set_section(std::string(artifact::kFunctionsSection), artifact::functions_section_to_json({unet}));
  writer.finish();
}

artifact::ArtifactOpenOptions open_options(const std::string& target, const std::string& key_file) {
  artifact::ArtifactOpenOptions options;
  if (!target.empty()) options.expected_targets = {target};
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

}  // namespace websd::test
