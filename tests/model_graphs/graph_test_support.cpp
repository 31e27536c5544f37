#include "graph_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/dtype.h"
#include "io/safetensors_reader.h"
#include "models/param_init.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

bool by_name(const ParamSpec& a, const ParamSpec& b) { return a.name < b.name; }

std::map<std::string, ModelParam> params_by_name(const std::vector<ModelParam>& params) {
  std::map<std::string, ModelParam> out;
  for (const auto& param : params) out[param.spec.name] = param;
  return out;
}

const SafetensorsFile& expected_file() {
  static const SafetensorsFile file(fixture_path("tiny-sd15/reference/expected.safetensors"));
  return file;
}

}  // namespace

std::string tiny_model_dir() { return fixture_path("tiny-sd15/model"); }
ClipTextConfig tiny_clip_config() { return clip_config_read(tiny_model_dir() + "/text_encoder/config.json"); }
UNetConfig tiny_unet_config() { return unet_config_read(tiny_model_dir() + "/unet/config.json"); }
VaeConfig tiny_vae_config() { return vae_config_read(tiny_model_dir() + "/vae/config.json"); }

UNetConfig sd2_style_unet_config(bool linear_projection) {
  return unet_config_from_json(
      {{"_class_name", "UNet2DConditionModel"},
       {"block_out_channels", {32, 64, 64}},
       {"down_block_types", nlohmann::json::array({"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"})},
       {"up_block_types", nlohmann::json::array({"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"})},
       {"attention_head_dim", {2, 4, 4}},
       {"use_linear_projection", linear_projection},
       {"cross_attention_dim", 48},
       {"layers_per_block", 1},
       {"transformer_layers_per_block", 2},
       {"norm_num_groups", 16},
       {"upcast_attention", true}},
      "sd2-style test config");
}

UNetConfig two_block_unet_config() {
  return unet_config_from_json({{"_class_name", "UNet2DConditionModel"},
                                {"block_out_channels", {32, 64}},
                                {"down_block_types", nlohmann::json::array({"CrossAttnDownBlock2D", "DownBlock2D"})},
                                {"up_block_types", nlohmann::json::array({"UpBlock2D", "CrossAttnUpBlock2D"})},
                                {"attention_head_dim", 4},
                                {"cross_attention_dim", 32},
                                {"layers_per_block", {2, 1}},
                                {"transformer_layers_per_block", {1, 2}},
                                {"norm_num_groups", 8},
                                {"norm_eps", 1e-6},
                                {"flip_sin_to_cos", false},
                                {"freq_shift", 1},
                                {"time_embedding_dim", 96}},
                               "2-block test config");
}

VaeConfig three_level_vae_config() {
  const nlohmann::json down(3, "DownEncoderBlock2D"), up(3, "UpDecoderBlock2D");
  return vae_config_from_json({{"_class_name", "AutoencoderKL"},
                               {"block_out_channels", {32, 64, 64}},
                               {"down_block_types", down},
                               {"up_block_types", up},
                               {"layers_per_block", 1},
                               {"norm_num_groups", 16}},
                              "3-level test config");
}

VaeConfig plain_two_level_vae_config() {
  const nlohmann::json down(2, "DownEncoderBlock2D"), up(2, "UpDecoderBlock2D");
  return vae_config_from_json({{"_class_name", "AutoencoderKL"},
                               {"block_out_channels", {16, 32}},
                               {"down_block_types", down},
                               {"up_block_types", up},
                               {"layers_per_block", 2},
                               {"norm_num_groups", 8},
                               {"latent_channels", 3},
                               {"use_quant_conv", false},
                               {"use_post_quant_conv", false},
                               {"mid_block_add_attention", false}},
                              "plain 2-level test config");
}

std::vector<ParamSpec> sorted_weight_specs(const graph::Function& function) {
  std::vector<ParamSpec> specs;
  for (const auto id : function.weights()) {
    const auto& value = function.value(id);
    specs.push_back({value.name, value.type.shape});
  }
  std::sort(specs.begin(), specs.end(), by_name);
  return specs;
}

std::vector<ParamSpec> sorted_specs(const std::vector<ModelParam>& params) {
  std::vector<ParamSpec> specs = param_specs(params);
  std::sort(specs.begin(), specs.end(), by_name);
  return specs;
}

cpu::WeightSource checkpoint_weights(const CheckpointComponent& component, const std::vector<ModelParam>& params) {
  component.bind(param_specs(params));  // throws, listing every mismatch
  const auto known = std::make_shared<std::map<std::string, ModelParam>>(params_by_name(params));
  return
      [&component, known](const std::string& name, const TensorType& type, const cpu::WeightPacking* packing) {
        const auto it = known->find(name);
        EXPECT_NE(it, known->end()) << "the graph's weight '" << name << "' is not in the parameter list";
        if (it == known->end()) return std::shared_ptr<std::vector<float>>();
        EXPECT_EQ(it->second.spec.shape, type.shape) << name;
        auto storage = std::make_shared<std::vector<float>>(static_cast<std::size_t>(type.numel()));
        component.read_f32_into(name, *storage);
        return packing ? std::make_shared<std::vector<float>>(packing->pack(*storage)) : storage;
      };
}

cpu::WeightSource random_weights(const std::vector<ModelParam>& params, std::uint64_t seed) {
  const auto known = std::make_shared<std::map<std::string, ModelParam>>(params_by_name(params));
  return [known, seed](const std::string& name, const TensorType& type, const cpu::WeightPacking* packing) {
    const auto it = known->find(name);
    EXPECT_NE(it, known->end()) << "the graph's weight '" << name << "' is not in the parameter list";
    if (it == known->end()) return std::shared_ptr<std::vector<float>>();
    EXPECT_EQ(it->second.spec.shape, type.shape) << name;
    const auto count = static_cast<std::size_t>(shape_numel(it->second.spec.shape));
    std::vector<std::byte> half(2 * count);
    param_init_f16(it->second, seed, "test", half);
    auto storage = std::make_shared<std::vector<float>>(count);
    convert_to_f32(half.data(), DType::kF16, count, storage->data());
    return packing ? std::make_shared<std::vector<float>>(packing->pack(*storage)) : storage;
  };
}

cpu::CpuTensor expected_tensor(const std::string& key) {
  const HostTensor host = expected_file().read_f32(key);
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate({DType::kF32, host.shape});
  *tensor.f32 = host.data;
  return tensor;
}

cpu::CpuTensor expected_i64_tensor(const std::string& key) {
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate({DType::kI64, expected_file().at(key).shape});
  *tensor.i64 = expected_file().read_i64(key);
  return tensor;
}

cpu::CpuTensor filled_tensor(const Shape& shape, float value) {
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate({DType::kF32, shape});
  std::fill(tensor.f32->begin(), tensor.f32->end(), value);
  return tensor;
}

std::vector<cpu::CpuTensor> run_on_cpu(const graph::Function& function, const cpu::WeightSource& weights,
                                       const std::vector<cpu::CpuTensor>& inputs) {
  cpu::CpuExecutor executor(function);
  executor.bind_weights(weights);
  return executor.run(inputs);
}

void expect_finite_and_varied(const cpu::CpuTensor& tensor, const std::string& what) {
  const auto& values = *tensor.f32;
  ASSERT_FALSE(values.empty()) << what;
  const auto non_finite = std::count_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
  EXPECT_EQ(non_finite, 0) << what << ": " << non_finite << " of " << values.size() << " values are not finite";
  const auto [lowest, highest] = std::minmax_element(values.begin(), values.end());
  EXPECT_LT(*lowest, *highest) << what << ": every value equals " << *lowest;
}

}  // namespace websd::test
