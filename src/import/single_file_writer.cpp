#include "import/single_file_writer.h"

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "import/checkpoint_tokenizer.h"
#include "import/ldm_layout.h"
#include "import/single_file_architecture.h"
#include "io/json_file.h"
#include "io/safetensors_writer.h"

namespace websd {
namespace {

// One tensor of the file: the source tensors it is made of, or a constant (the OpenCLIP identity block).
struct Item {
  SafetensorsTensorSpec spec;
  std::vector<TensorLocation> parts;
  float constant = 0;
};

void fill_constant(std::span<std::byte> bytes, DType dtype, float value) {
  if (value == 0) return;  // the writer zero-fills
  const std::size_t size = dtype_size(dtype);
  for (std::size_t at = 0; at + size <= bytes.size(); at += size) {
    if (dtype == DType::kF32) {
      std::memcpy(bytes.data() + at, &value, sizeof value);
    } else {
      const std::uint16_t bits = dtype == DType::kF16 ? f32_to_f16(value) : f32_to_bf16(value);
      std::memcpy(bytes.data() + at, &bits, sizeof bits);
    }
  }
}

void fill_parts(const Item& item, std::span<std::byte> bytes) {
  std::size_t at = 0;
  for (const TensorLocation& part : item.parts) {
    const std::span<const std::byte> source = part.file->bytes(*part.entry);
    if (part.entry->dtype == item.spec.dtype) {
      std::memcpy(bytes.data() + at, source.data(), source.size());
      at += source.size();
    } else {
      const std::size_t count = part.entry->numel();
      convert_to_f32(source.data(), part.entry->dtype, count, reinterpret_cast<float*>(bytes.data() + at));
      at += count * sizeof(float);
    }
    part.file->release_pages(*part.entry);  // keeps a multi-gigabyte copy from staying resident
  }
}

// SD 2.x's OpenCLIP runs 23 of its 24 blocks; the 24th written here adds nothing (zero attention and
// MLP outputs on the residual path), so a tool that runs all 24 gets the same result.
void add_identity_block(std::vector<Item>& items, const ClipTextConfig& clip, DType dtype) {
  const std::string block =
      std::string(kLdmOpenClipPrefix) + "transformer.resblocks." + std::to_string(clip.num_hidden_layers) + ".";
  const std::int64_t c = clip.hidden_size, inner = clip.intermediate_size;
  const std::vector<std::pair<std::string, Shape>> zeros = {{"attn.in_proj_weight", {3 * c, c}},
                                                            {"attn.in_proj_bias", {3 * c}},
                                                            {"attn.out_proj.weight", {c, c}},
                                                            {"attn.out_proj.bias", {c}},
                                                            {"ln_1.bias", {c}},
                                                            {"ln_2.bias", {c}},
                                                            {"mlp.c_fc.weight", {inner, c}},
                                                            {"mlp.c_fc.bias", {inner}},
                                                            {"mlp.c_proj.weight", {c, inner}},
                                                            {"mlp.c_proj.bias", {c}}};
  for (const auto& [name, shape] : zeros) items.push_back({{block + name, dtype, shape}, {}, 0});
  for (const char* name : {"ln_1.weight", "ln_2.weight"}) items.push_back({{block + name, dtype, {c}}, {}, 1});
}

void refuse_overwriting_source(const DiffusersCheckpoint& source, const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return;
  for (const auto& component : source.components()) {
    for (const auto& file : component.weight_files()) {
      if (std::filesystem::equivalent(path, file->path(), error)) {
        throw Error("convert", path + ": is a weights file of the checkpoint being converted (choose another --out)");
      }
    }
  }
}

}  // namespace

SingleFileWriteReport single_file_write(const DiffusersCheckpoint& source, const std::string& path,
                                        const SingleFileWriteOptions& options) {
  refuse_overwriting_source(source, path);
  const CheckpointComponent& text = source.component("text_encoder");
  const CheckpointComponent& unet_component = source.component("unet");
  const CheckpointComponent& vae_component = source.component("vae");
  const ClipTextConfig clip = clip_config_from_json(text.config(), text.config_origin());
  const UNetConfig unet = unet_config_from_json(unet_component.config(), unet_component.config_origin());
  const VaeConfig vae = vae_config_from_json(vae_component.config(), vae_component.config_origin());
  const TextEncoderLayout layout =
      clip.hidden_act == ClipActivation::kGelu ? TextEncoderLayout::kOpenClip : TextEncoderLayout::kHfClip;

  std::vector<Item> items;
  for (const LdmTensor& tensor : ldm_layout(clip, layout, unet, vae)) {
    const CheckpointComponent& component = source.component(tensor.component);
    Item item{{tensor.name, DType::kF32, tensor.shape}, {}, 0};
    for (std::size_t i = 0; i < tensor.parts.size(); ++i) {
      const ParamSpec& part = tensor.parts[i];
      const TensorLocation& location = component.at(part.name);
      if (location.entry->shape != part.shape || !dtype_is_float(location.entry->dtype)) {
        throw Error("convert", location.file->path() + ": tensor " + safetensors_quote_name(part.name) + " is " +
                                   std::string(dtype_name(location.entry->dtype)) + " " +
                                   shape_to_string(location.entry->shape) + ", the " + tensor.component +
                                   " config asks for a float " + shape_to_string(part.shape));
      }
      if (i == 0) item.spec.dtype = location.entry->dtype;
      if (location.entry->dtype != item.spec.dtype) item.spec.dtype = DType::kF32;
      item.parts.push_back(location);
    }
    items.push_back(std::move(item));
  }
  if (layout == TextEncoderLayout::kOpenClip) add_identity_block(items, clip, items.front().spec.dtype);

  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (options.embed_configs) {
    for (const CheckpointComponent* component : {&text, &unet_component, &vae_component}) {
      metadata[websd_config_metadata_key(component->name())] = json_dump(component->config());
    }
    if (!source.scheduler_config().is_null()) {
      metadata[websd_config_metadata_key("scheduler")] = json_dump(source.scheduler_config());
    }
    for (const auto& [name, content] : checkpoint_tokenizer_files(source)) {
      metadata[websd_tokenizer_metadata_key(name)] = content;
    }
  }
  std::vector<SafetensorsTensorSpec> specs;
  for (const Item& item : items) specs.push_back(item.spec);
  safetensors_write_streamed(
      path, specs,
      [&](std::size_t index, std::span<std::byte> bytes) {
        const Item& item = items[index];
        if (item.parts.empty()) {
          fill_constant(bytes, item.spec.dtype, item.constant);
        } else {
          fill_parts(item, bytes);
        }
      },
      metadata);
  SingleFileWriteReport report;
  report.tensors = items.size();
  report.bytes = std::filesystem::file_size(path);
  report.layout = layout == TextEncoderLayout::kOpenClip ? "SD 2.x (OpenCLIP)" : "SD 1.x (CLIP)";
  return report;
}

}  // namespace websd
