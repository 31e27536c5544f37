#include "import/checkpoint_folder.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/safetensors_writer.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

std::string with_variant(const std::string& stem, const std::string& variant) {
  return stem + (variant.empty() ? "" : "." + variant) + ".safetensors";
}

std::vector<TensorToWrite> as_tensors(const std::vector<ParamSpec>& params, DType dtype) {
  std::vector<TensorToWrite> tensors;
  for (const auto& param : params) tensors.push_back({param.name, param.shape, dtype});
  return tensors;
}

}  // namespace

float checkpoint_value(std::size_t i) { return static_cast<float>(static_cast<int>(i % 13) - 6) * 0.125f; }

void write_tensors(const std::string& path, const std::vector<TensorToWrite>& tensors) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<SafetensorsTensorView> views;
  for (const auto& tensor : tensors) {
    const auto count = static_cast<std::size_t>(shape_numel(tensor.shape));
    std::vector<std::byte> bytes(count * dtype_size(tensor.dtype));
    for (std::size_t i = 0; i < count; ++i) {
      std::byte* element = bytes.data() + i * dtype_size(tensor.dtype);
      const float value = checkpoint_value(i);
      if (tensor.dtype == DType::kF32) {
        std::memcpy(element, &value, 4);
      } else if (tensor.dtype == DType::kF16 || tensor.dtype == DType::kBF16) {
        const std::uint16_t half = tensor.dtype == DType::kF16 ? f32_to_f16(value) : f32_to_bf16(value);
        std::memcpy(element, &half, 2);
      } else if (tensor.dtype == DType::kI64) {
        const auto index = static_cast<std::int64_t>(i);
        std::memcpy(element, &index, 8);
      } else {
        throw std::runtime_error("write_tensors: unsupported dtype for " + tensor.name);
      }
    }
    storage.push_back(std::move(bytes));
    views.push_back({tensor.name, tensor.dtype, tensor.shape, storage.back()});
  }
  safetensors_write(path, views, {{"format", "pt"}});
}

void write_json(const std::string& path, const nlohmann::json& value) { write_text(path, value.dump(2)); }

void write_text(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<ParamSpec> text_encoder_params() {
  return {{"text_model.embeddings.token_embedding.weight", {10, 4}},
          {"text_model.embeddings.position_embedding.weight", {6, 4}},
          {"text_model.encoder.layers.0.self_attn.q_proj.weight", {4, 4}},
          {"text_model.encoder.layers.0.self_attn.q_proj.bias", {4}},
          {"text_model.final_layer_norm.weight", {4}},
          {"text_model.final_layer_norm.bias", {4}}};
}

std::vector<ParamSpec> unet_params() {
  return {{"conv_in.weight", {8, 4, 3, 3}},
          {"conv_in.bias", {8}},
          {"time_embedding.linear_1.weight", {16, 8}},
          {"time_embedding.linear_1.bias", {16}},
          {"conv_out.weight", {4, 8, 3, 3}},
          {"conv_out.bias", {4}}};
}

std::vector<ParamSpec> vae_params() {
  return {{"decoder.conv_in.weight", {8, 4, 3, 3}}, {"decoder.conv_in.bias", {8}}};
}

std::string write_checkpoint_folder(const std::string& tag, const FolderOptions& options) {
  const std::string dir = make_temp_dir(tag);
  write_json(dir + "/model_index.json", {{"_class_name", "StableDiffusionPipeline"},
                                         {"_diffusers_version", "0.40.0"},
                                         {"requires_safety_checker", false},
                                         {"safety_checker", {nullptr, nullptr}},
                                         {"scheduler", {"diffusers", "PNDMScheduler"}},
                                         {"text_encoder", {"transformers", "CLIPTextModel"}},
                                         {"tokenizer", {"transformers", "CLIPTokenizer"}},
                                         {"unet", {"diffusers", "UNet2DConditionModel"}},
                                         {"vae", {"diffusers", "AutoencoderKL"}}});
  write_json(dir + "/scheduler/scheduler_config.json", {{"_class_name", "PNDMScheduler"}});
  write_json(dir + "/tokenizer/tokenizer_config.json", {{"model_max_length", 77}});

  write_json(dir + "/text_encoder/config.json", {{"architectures", {"CLIPTextModel"}}, {"hidden_size", 4}});
  auto text_tensors = as_tensors(text_encoder_params(), options.dtype);
  if (!options.text_prefix) {
    for (auto& tensor : text_tensors) tensor.name.erase(0, std::strlen("text_model."));
  }
  if (options.position_ids) {
    text_tensors.push_back(
        {options.text_prefix ? "text_model.embeddings.position_ids" : "embeddings.position_ids", {1, 6}, DType::kI64});
  }
  write_tensors(dir + "/text_encoder/" + with_variant("model", options.variant), text_tensors);

  write_json(dir + "/unet/config.json", {{"_class_name", "UNet2DConditionModel"}, {"in_channels", 4}});
  const auto unet_tensors = as_tensors(unet_params(), options.dtype);
  if (options.unet_shards <= 1) {
    write_tensors(dir + "/unet/" + with_variant("diffusion_pytorch_model", options.variant), unet_tensors);
  } else {
    nlohmann::json weight_map = nlohmann::json::object();
    const auto shards = static_cast<std::size_t>(options.unet_shards);
    for (std::size_t shard = 0; shard < shards; ++shard) {
      const std::string name = "diffusion_pytorch_model" + (options.variant.empty() ? "" : "." + options.variant) +
                               "-0000" + std::to_string(shard + 1) + "-of-0000" + std::to_string(shards) +
                               ".safetensors";
      std::vector<TensorToWrite> part;
      for (std::size_t i = shard; i < unet_tensors.size(); i += shards) {
        part.push_back(unet_tensors[i]);
        weight_map[unet_tensors[i].name] = name;
      }
      write_tensors(dir + "/unet/" + name, part);
    }
    const std::string index =
        "diffusion_pytorch_model.safetensors.index" + (options.variant.empty() ? "" : "." + options.variant) + ".json";
    write_json(dir + "/unet/" + index, {{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}});
  }

  write_json(dir + "/vae/config.json", {{"_class_name", "AutoencoderKL"}, {"scaling_factor", 0.18215}});
  write_tensors(dir + "/vae/" + with_variant("diffusion_pytorch_model", options.variant),
                as_tensors(vae_params(), options.dtype));
  return dir;
}

}  // namespace websd::test
