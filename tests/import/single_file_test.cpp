// Single-file checkpoints: the fixture written by websd's converter reads back into the same model
// (configs and tensor bytes), folder -> single file -> folder is byte-identical, files without
// websd's metadata are read from their shapes, --config and the family defaults, and every kind of
// hostile or wrong file gives one clear error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "import/checkpoint_tokenizer.h"
#include "import/diffusers_checkpoint.h"
#include "import/diffusers_folder_writer.h"
#include "import/single_file_writer.h"
#include "io/json_file.h"
#include "io/safetensors_writer.h"
#include "models/clip_config.h"
#include "models/random_checkpoint.h"
#include "models/unet_config.h"
#include "models/vae_config.h"
#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string fixture_model() { return test::fixture_path("tiny-sd15/model"); }

ImportOptions import_options(std::function<void(ImportOptions&)> set) {
  ImportOptions options;
  set(options);
  return options;
}

// The fixture as a single file with websd's metadata, written once per process.
const std::string& fixture_single_file() {
  static const std::string path = [] {
    const std::string file = test::make_temp_dir("single-fixture") + "/tiny.safetensors";
    single_file_write(DiffusersCheckpoint::open(fixture_model()), file);
    return file;
  }();
  return path;
}

// Every tensor of a component, name -> (dtype, shape, bytes).
std::map<std::string, std::tuple<DType, Shape, std::vector<std::byte>>> tensors_of(
    const CheckpointComponent& component) {
  std::map<std::string, std::tuple<DType, Shape, std::vector<std::byte>>> out;
  for (const auto& [name, location] : component.tensors()) {
    const auto bytes = location.file->bytes(*location.entry);
    out[name] = {location.entry->dtype, location.entry->shape, {bytes.begin(), bytes.end()}};
  }
  return out;
}

void expect_same_tensors(const DiffusersCheckpoint& a, const DiffusersCheckpoint& b) {
  for (const char* name : {"text_encoder", "unet", "vae"}) {
    const auto left = tensors_of(a.component(name));
    const auto right = tensors_of(b.component(name));
    EXPECT_EQ(left.size(), right.size()) << name;
    for (const auto& [tensor, value] : left) {
      const auto found = right.find(tensor);
      ASSERT_NE(found, right.end()) << name << ": " << tensor;
      EXPECT_TRUE(found->second == value) << name << ": " << tensor << " differs";
    }
  }
}

// A safetensors file held in memory, to edit into hostile variants.
struct Tensor {
  std::string name;
  DType dtype;
  Shape shape;
  std::vector<std::byte> bytes;
};

struct FileContent {
  std::vector<Tensor> tensors;
  std::map<std::string, std::string> metadata;

  static FileContent read(const std::string& path) {
    const SafetensorsFile file(path);
    FileContent content{{}, file.metadata()};
    for (const auto& entry : file.entries()) {
      const auto bytes = file.bytes(entry);
      content.tensors.push_back({entry.name, entry.dtype, entry.shape, {bytes.begin(), bytes.end()}});
    }
    return content;
  }

  void write(const std::string& path) const {
    std::vector<SafetensorsTensorView> views;
    for (const auto& tensor : tensors) views.push_back({tensor.name, tensor.dtype, tensor.shape, tensor.bytes});
    safetensors_write(path, views, metadata);
  }

  Tensor* find(const std::string& name) {
    for (auto& tensor : tensors) {
      if (tensor.name == name) return &tensor;
    }
    return nullptr;
  }

  void erase(const std::string& name) {
    std::erase_if(tensors, [&](const Tensor& tensor) { return tensor.name == name; });
  }

  void rename_prefix(const std::string& from, const std::string& to) {
    for (auto& tensor : tensors) {
      if (tensor.name.rfind(from, 0) == 0) tensor.name = to + tensor.name.substr(from.size());
    }
  }
};

std::string edited(const std::string& tag, const std::function<void(FileContent&)>& edit,
                   const std::string& source = fixture_single_file()) {
  FileContent content = FileContent::read(source);
  edit(content);
  const std::string path = test::make_temp_dir(tag) + "/model.safetensors";
  content.write(path);
  return path;
}

// Tiny SD 1.x / 2.x architectures whose widths let every value be read back from the tensors and the
// family's defaults (64-wide CLIP heads, SD 1.x's 8 UNet heads, SD 2.x's 64-wide ones), written with
// random weights into a folder.
ModelPreset inferable_preset(bool sd2) {
  ModelPreset preset = model_preset(sd2 ? "sd21" : "tiny");
  const ModelPreset& tiny = model_preset("tiny");
  Json text = json_parse(tiny.text_encoder, "tiny");
  text.update(Json{{"hidden_size", 64},
                   {"num_attention_heads", 1},
                   {"intermediate_size", 128},
                   {"projection_dim", sd2 ? 512 : 768},
                   {"hidden_act", sd2 ? "gelu" : "quick_gelu"}});
  Json unet = json_parse(tiny.unet, "tiny");
  unet.update(Json{{"cross_attention_dim", 64}, {"sample_size", sd2 ? 96 : 64}});
  if (sd2) {
    unet.update(Json{{"block_out_channels", {64, 128, 128}},
                     {"attention_head_dim", {1, 2, 2}},
                     {"use_linear_projection", true},
                     {"upcast_attention", true}});
  }
  Json vae = json_parse(tiny.vae, "tiny");
  vae["sample_size"] = sd2 ? 768 : 512;
  Json index = json_parse(tiny.model_index, "tiny");
  if (sd2) index["scheduler"] = {"diffusers", "DDIMScheduler"};
  preset.model_index = index.dump();
  preset.text_encoder = text.dump();
  preset.unet = unet.dump();
  preset.vae = vae.dump();
  preset.tokenizer_pad = sd2 ? "!" : "<|endoftext|>";
  return preset;
}

std::string write_inferable_folder(bool sd2) {
  RandomCheckpointOptions options;
  options.out_dir = test::make_temp_dir(sd2 ? "inferable-sd2" : "inferable-sd1") + "/model";
  options.seed = 3;
  random_checkpoint_write(inferable_preset(sd2), options, [](const std::string&) {});
  return options.out_dir;
}

std::string write_single_file(const std::string& folder, bool metadata, const std::string& tag) {
  const std::string path = test::make_temp_dir(tag) + "/model.safetensors";
  single_file_write(DiffusersCheckpoint::open(folder), path, {metadata});
  return path;
}

template <typename Config>
Config parsed(const CheckpointComponent& component, Config (*parse)(const Json&, const std::string&)) {
  return parse(component.config(), component.config_origin());
}

TEST(SingleFile, TheFixtureReadsBackIntoTheSameModel) {
  const DiffusersCheckpoint folder = DiffusersCheckpoint::open(fixture_model());
  const DiffusersCheckpoint file = DiffusersCheckpoint::open(fixture_single_file());
  EXPECT_TRUE(file.is_single_file());
  EXPECT_EQ(file.family(), "SD 1.x");
  EXPECT_NE(file.config_source().find("websd metadata"), std::string::npos);
  EXPECT_TRUE(file.notes().empty());
  expect_same_tensors(folder, file);
  EXPECT_EQ(parsed(file.component("unet"), unet_config_from_json),
            parsed(folder.component("unet"), unet_config_from_json));
  EXPECT_EQ(parsed(file.component("vae"), vae_config_from_json), parsed(folder.component("vae"), vae_config_from_json));
  EXPECT_EQ(parsed(file.component("text_encoder"), clip_config_from_json),
            parsed(folder.component("text_encoder"), clip_config_from_json));
  EXPECT_EQ(file.scheduler_config(), folder.scheduler_config());
  // The fixture's own tokenizer travels in the metadata.
  EXPECT_EQ(file.tokenizer().files, checkpoint_tokenizer_files(folder));
}

TEST(SingleFile, FolderToSingleFileToFolderIsByteIdenticalInTensors) {
  const std::string back = test::make_temp_dir("single-roundtrip") + "/model";
  diffusers_folder_write(DiffusersCheckpoint::open(fixture_single_file()), back);
  for (const char* file : {"model_index.json", "unet/config.json", "vae/config.json", "text_encoder/config.json",
                           "scheduler/scheduler_config.json", "tokenizer/tokenizer.json",
                           "unet/diffusion_pytorch_model.safetensors", "text_encoder/model.safetensors"}) {
    EXPECT_TRUE(fs::exists(back + "/" + file)) << file;
  }
  expect_same_tensors(DiffusersCheckpoint::open(fixture_model()), DiffusersCheckpoint::open(back));
  // The same file read by stored name, not through websd's name mapping.
  const SafetensorsFile original(fixture_model() + "/unet/diffusion_pytorch_model.safetensors");
  const SafetensorsFile copy(back + "/unet/diffusion_pytorch_model.safetensors");
  ASSERT_EQ(original.entries().size(), copy.entries().size());
  for (const auto& entry : original.entries()) {
    const auto a = original.bytes(entry);
    const auto b = copy.bytes(copy.at(entry.name));
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << entry.name;
  }
}

TEST(SingleFile, AnSd1FileWithoutMetadataIsReadFromItsShapes) {
  const std::string folder_path = write_inferable_folder(false);
  const DiffusersCheckpoint folder = DiffusersCheckpoint::open(folder_path);
  const DiffusersCheckpoint file = DiffusersCheckpoint::open(write_single_file(folder_path, false, "sd1-plain"));
  EXPECT_NE(file.config_source().find("tensor shapes"), std::string::npos);
  EXPECT_EQ(parsed(file.component("unet"), unet_config_from_json),
            parsed(folder.component("unet"), unet_config_from_json));
  EXPECT_EQ(parsed(file.component("vae"), vae_config_from_json), parsed(folder.component("vae"), vae_config_from_json));
  EXPECT_EQ(parsed(file.component("text_encoder"), clip_config_from_json),
            parsed(folder.component("text_encoder"), clip_config_from_json));
  expect_same_tensors(folder, file);
  EXPECT_EQ(file.scheduler_config().value("prediction_type", ""), "epsilon");
  EXPECT_EQ(file.scheduler_config().value("_class_name", ""), "PNDMScheduler");
  EXPECT_EQ(file.tokenizer().bundled_pad, "<|endoftext|>");
  EXPECT_TRUE(file.notes().empty());
}

TEST(SingleFile, AnSd2FileWithoutMetadataIsReadAsThe768VModelUnlessToldOtherwise) {
  const std::string folder_path = write_inferable_folder(true);
  const DiffusersCheckpoint folder = DiffusersCheckpoint::open(folder_path);
  const std::string path = write_single_file(folder_path, false, "sd2-plain");
  // The OpenCLIP tower gets one block more than the 2 layers SD reads (its penultimate layer).
  EXPECT_NE(SafetensorsFile(path).find("cond_stage_model.model.transformer.resblocks.2.attn.in_proj_weight"), nullptr);
  const DiffusersCheckpoint file = DiffusersCheckpoint::open(path);
  EXPECT_EQ(file.family(), "SD 2.x");
  EXPECT_EQ(parsed(file.component("unet"), unet_config_from_json),
            parsed(folder.component("unet"), unet_config_from_json));
  EXPECT_EQ(parsed(file.component("vae"), vae_config_from_json), parsed(folder.component("vae"), vae_config_from_json));
  EXPECT_EQ(parsed(file.component("text_encoder"), clip_config_from_json),
            parsed(folder.component("text_encoder"), clip_config_from_json));
  expect_same_tensors(folder, file);
  EXPECT_EQ(file.scheduler_config().value("prediction_type", ""), "v_prediction");
  EXPECT_EQ(file.tokenizer().bundled_pad, "!");
  ASSERT_EQ(file.notes().size(), 1u);
  EXPECT_NE(file.notes()[0].find("assuming v_prediction"), std::string::npos);

  const DiffusersCheckpoint base =
      DiffusersCheckpoint::open(path, import_options([](ImportOptions& o) { o.prediction_type = "epsilon"; }));
  EXPECT_TRUE(base.notes().empty());
  EXPECT_EQ(base.scheduler_config().value("prediction_type", ""), "epsilon");
  EXPECT_EQ(parsed(base.component("unet"), unet_config_from_json).sample_size,
            (std::pair<std::int64_t, std::int64_t>{64, 64}));
  // kohya/SAI modelspec metadata answers the question too.
  const std::string spec = edited(
      "sd2-modelspec",
      [](FileContent& content) {
        content.metadata["modelspec.prediction_type"] = "epsilon";
        content.metadata["modelspec.resolution"] = "512x512";
      },
      path);
  const DiffusersCheckpoint described = DiffusersCheckpoint::open(spec);
  EXPECT_TRUE(described.notes().empty());
  EXPECT_EQ(described.scheduler_config().value("prediction_type", ""), "epsilon");
}

TEST(SingleFile, AnLdmConfigSuppliesWhatTheTensorsCannotSay) {
  const std::string path = write_single_file(write_inferable_folder(false), false, "sd1-yaml");
  const std::string dir = test::make_temp_dir("ldm-yaml");
  const auto yaml_with = [&](const std::string& unet_params, const std::string& extra = "") {
    const std::string file = dir + "/config-" + std::to_string(std::hash<std::string>{}(unet_params + extra)) + ".yaml";
    std::ofstream(file) << "model:\n  target: ldm.models.diffusion.ddpm.LatentDiffusion\n  params:\n"
                           "    parameterization: \"v\"\n    linear_start: 0.001\n    linear_end: 0.02\n"
                           "    timesteps: 1000\n    image_size: 8\n    scale_factor: 0.13025\n"
                        << extra
                        << "    unet_config:\n      target: ldm.modules.diffusionmodules.openaimodel.UNetModel\n"
                           "      params:\n"
                        << unet_params
                        << "    cond_stage_config:\n      target: ldm.modules.encoders.modules.FrozenCLIPEmbedder\n";
    return file;
  };
  const std::string good = yaml_with(
      "        model_channels: 32\n        channel_mult: [1, 2, 2]\n        num_res_blocks: 2\n"
      "        num_heads: 4\n        context_dim: 64\n        transformer_depth: 1\n");
  const DiffusersCheckpoint file =
      DiffusersCheckpoint::open(path, import_options([&](ImportOptions& o) { o.ldm_config = good; }));
  const UNetConfig unet = parsed(file.component("unet"), unet_config_from_json);
  EXPECT_EQ(unet.attention_heads, (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_EQ(unet.sample_size, (std::pair<std::int64_t, std::int64_t>{8, 8}));
  EXPECT_DOUBLE_EQ(parsed(file.component("vae"), vae_config_from_json).scaling_factor, 0.13025);
  EXPECT_EQ(file.scheduler_config().value("prediction_type", ""), "v_prediction");
  EXPECT_DOUBLE_EQ(file.scheduler_config().value("beta_start", 0.0), 0.001);
  EXPECT_DOUBLE_EQ(file.scheduler_config().value("beta_end", 0.0), 0.02);
  // The option wins over the config.
  EXPECT_EQ(DiffusersCheckpoint::open(path, import_options([&](ImportOptions& o) {
                                        o.ldm_config = good;
                                        o.prediction_type = "epsilon";
                                      }))
                .scheduler_config()
                .value("prediction_type", ""),
            "epsilon");

  const auto error_with = [&](const std::string& yaml) {
    return test::error_of(
        [&] { (void)DiffusersCheckpoint::open(path, import_options([&](ImportOptions& o) { o.ldm_config = yaml; })); });
  };
  EXPECT_NE(error_with(yaml_with("        model_channels: 320\n"))
                .find("says model_channels=[320] but the tensors have [32]"),
            std::string::npos);
  EXPECT_NE(error_with(yaml_with("        num_res_blocks: [2, 2, 1]\n")).find("num_res_blocks"), std::string::npos);
  const std::string open_clip = dir + "/openclip.yaml";
  std::ofstream(open_clip) << "model:\n  params:\n    cond_stage_config:\n"
                              "      target: ldm.modules.encoders.modules.FrozenOpenCLIPEmbedder\n";
  EXPECT_NE(error_with(open_clip).find("FrozenOpenCLIPEmbedder but the file holds CLIP (SD 1.x) tensors"),
            std::string::npos);
  const std::string sdxl = dir + "/sdxl.yaml";
  std::ofstream(sdxl)
      << "model:\n  params:\n    network_config:\n      target: sgm.modules.diffusionmodules.openaimodel.UNetModel\n";
  EXPECT_NE(error_with(sdxl).find("an SDXL (sgm) config"), std::string::npos);
  const std::string broken = dir + "/broken.yaml";
  std::ofstream(broken) << "model: [unclosed\n";
  EXPECT_NE(error_with(broken).find("not valid YAML"), std::string::npos);
  EXPECT_NE(error_with(dir + "/missing.yaml").find("No such file"), std::string::npos);
  const std::string wrong_type = dir + "/wrong-type.yaml";
  std::ofstream(wrong_type) << "model:\n  params:\n    timesteps: many\n";
  EXPECT_NE(error_with(wrong_type).find("model.params.timesteps has a value of the wrong type"), std::string::npos);
}

TEST(SingleFile, TheUNetCanComeFromItsEmaCopy) {
  const std::string path = edited("single-ema", [](FileContent& content) {
    std::vector<Tensor> ema;
    for (const Tensor& tensor : content.tensors) {
      if (tensor.name.rfind("model.diffusion_model.", 0) != 0) continue;
      std::string name = "model_ema.diffusion_model";
      for (const char c : tensor.name.substr(std::string("model.diffusion_model").size())) {
        if (c != '.') name += c;
      }
      ema.push_back({name, tensor.dtype, tensor.shape, std::vector<std::byte>(tensor.bytes.size(), std::byte{0})});
    }
    content.tensors.insert(content.tensors.end(), ema.begin(), ema.end());
    const float decay = 0.9999f;
    std::vector<std::byte> bytes(4);
    std::memcpy(bytes.data(), &decay, 4);
    content.tensors.push_back({"model_ema.decay", DType::kF32, {}, bytes});
  });
  const DiffusersCheckpoint plain = DiffusersCheckpoint::open(path);
  ASSERT_EQ(plain.notes().size(), 1u);
  EXPECT_NE(plain.notes()[0].find("ignored the 494 EMA tensors"), std::string::npos);
  EXPECT_NE(plain.component("unet").read_f32("conv_in.weight").data[0], 0.0f);
  const DiffusersCheckpoint ema =
      DiffusersCheckpoint::open(path, import_options([](ImportOptions& o) { o.use_ema = true; }));
  for (const float value : ema.component("unet").read_f32("conv_in.weight").data) ASSERT_EQ(value, 0.0f);
  EXPECT_NE(test::error_of([] {
              (void)DiffusersCheckpoint::open(fixture_single_file(),
                                              import_options([](ImportOptions& o) { o.use_ema = true; }));
            }).find("--use-ema: the file holds no EMA weights"),
            std::string::npos);
}

TEST(SingleFile, F32AndBf16FilesAndOldClipNamesAndTrainingBuffersAreRead) {
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    const std::string path = edited("single-" + dtype_lower_name(dtype), [dtype](FileContent& content) {
      for (Tensor& tensor : content.tensors) {
        std::vector<float> values(tensor.bytes.size() / 2);
        convert_to_f32(tensor.bytes.data(), tensor.dtype, values.size(), values.data());
        tensor.dtype = dtype;
        tensor.bytes.assign(values.size() * dtype_size(dtype), std::byte{0});
        for (std::size_t i = 0; i < values.size(); ++i) {
          if (dtype == DType::kF32) {
            std::memcpy(tensor.bytes.data() + 4 * i, &values[i], 4);
          } else {
            const std::uint16_t bits = f32_to_bf16(values[i]);
            std::memcpy(tensor.bytes.data() + 2 * i, &bits, 2);
          }
        }
      }
    });
    const DiffusersCheckpoint file = DiffusersCheckpoint::open(path);
    const HostTensor read = file.component("unet").read_f32("conv_in.weight");
    const HostTensor reference =
        DiffusersCheckpoint::open(fixture_model()).component("unet").read_f32("conv_in.weight");
    for (std::size_t i = 0; i < read.data.size(); ++i) {
      ASSERT_NEAR(read.data[i], reference.data[i], dtype == DType::kF32 ? 0.0 : 1e-2 * std::fabs(reference.data[i]));
    }
  }
  const std::string old = edited("single-old-names", [](FileContent& content) {
    content.rename_prefix("cond_stage_model.transformer.text_model.", "cond_stage_model.transformer.");
    std::vector<std::byte> ids(77 * 8);
    content.tensors.push_back({"cond_stage_model.transformer.embeddings.position_ids", DType::kI64, {1, 77}, ids});
    content.tensors.push_back({"alphas_cumprod", DType::kF32, {1000}, std::vector<std::byte>(4000)});
    content.tensors.push_back({"betas", DType::kF32, {1000}, std::vector<std::byte>(4000)});
  });
  expect_same_tensors(DiffusersCheckpoint::open(fixture_model()), DiffusersCheckpoint::open(old));
}

TEST(SingleFile, HostileOrWrongFilesGiveOneClearError) {
  const auto open_error = [](const std::string& path, const ImportOptions& options = {}) {
    const std::string message = test::error_of([&] { (void)DiffusersCheckpoint::open(path, options); });
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  };
  const std::string u = "model.diffusion_model.";
  EXPECT_NE(
      open_error(edited("hostile-missing", [&](FileContent& c) { c.erase(u + "input_blocks.4.0.in_layers.0.bias"); }))
          .find("missing '" + u + "input_blocks.4.0.in_layers.0.bias'"),
      std::string::npos);
  EXPECT_NE(open_error(edited("hostile-shape",
                              [&](FileContent& c) {
                                Tensor* t = c.find("first_stage_model.decoder.norm_out.weight");
                                t->shape = {2, 16};
                              }))
                .find("'first_stage_model.decoder.norm_out.weight'"),
            std::string::npos);
  EXPECT_NE(
      open_error(
          edited(
              "hostile-extra",
              [&](FileContent& c) {
                c.tensors.push_back({"embedding_manager.embedder.weight", DType::kF16, {2}, std::vector<std::byte>(4)});
              }))
          .find("unexpected 'embedding_manager.embedder.weight'"),
      std::string::npos);
  EXPECT_NE(open_error(edited("hostile-int",
                              [&](FileContent& c) {
                                Tensor* t = c.find(u + "out.0.bias");
                                t->dtype = DType::kI16;
                              }))
                .find("I16"),
            std::string::npos);
  EXPECT_NE(open_error(edited("hostile-mixed",
                              [](FileContent& c) {
                                c.tensors.push_back({"cond_stage_model.model.token_embedding.weight",
                                                     DType::kF16,
                                                     {4, 2},
                                                     std::vector<std::byte>(16)});
                              }))
                .find("tensors of two model families were mixed"),
            std::string::npos);
  EXPECT_NE(open_error(edited("hostile-sdxl",
                              [](FileContent& c) {
                                c.tensors.push_back({"conditioner.embedders.1.model.ln_final.weight",
                                                     DType::kF16,
                                                     {2},
                                                     std::vector<std::byte>(4)});
                              }))
                .find("an SDXL checkpoint"),
            std::string::npos);
  EXPECT_NE(open_error(edited("hostile-lone-unet",
                              [&](FileContent& c) {
                                std::erase_if(c.tensors, [&](const Tensor& t) { return t.name.rfind(u, 0) != 0; });
                                c.rename_prefix(u, "");
                              }))
                .find("a lone UNet"),
            std::string::npos);
  EXPECT_NE(open_error(edited("hostile-no-vae",
                              [](FileContent& c) {
                                std::erase_if(c.tensors, [](const Tensor& t) {
                                  return t.name.rfind("first_stage_model.", 0) == 0;
                                });
                              }))
                .find("holds no VAE"),
            std::string::npos);
  EXPECT_NE(open_error(edited("hostile-no-text",
                              [](FileContent& c) {
                                std::erase_if(c.tensors, [](const Tensor& t) {
                                  return t.name.rfind("cond_stage_model.", 0) == 0;
                                });
                              }))
                .find("holds no text encoder"),
            std::string::npos);
  // Without metadata the architecture is read from tensors that must be there.
  EXPECT_NE(open_error(edited(
                           "hostile-no-conv-in", [&](FileContent& c) { c.erase(u + "input_blocks.0.0.weight"); },
                           write_single_file(write_inferable_folder(false), false, "hostile-plain")))
                .find("has no tensor '" + u + "input_blocks.0.0.weight' (the UNet's conv_in)"),
            std::string::npos);
  EXPECT_NE(open_error(edited("hostile-bad-metadata",
                              [](FileContent& c) { c.metadata["websd.unet.config"] = "{\"in_channels\": 0}"; }))
                .find("in_channels=0 is not supported"),
            std::string::npos);
  const std::string dir = test::make_temp_dir("hostile-files");
  std::ofstream(dir + "/truncated.safetensors") << std::string("\x40\x00\x00\x00\x00\x00\x00\x00{\"a\":", 13);
  EXPECT_NE(open_error(dir + "/truncated.safetensors").find("[safetensors]"), std::string::npos);
  std::ofstream(dir + "/model.ckpt") << "PK\x03\x04 a zip";
  EXPECT_NE(open_error(dir + "/model.ckpt").find("a PyTorch pickle checkpoint"), std::string::npos);
  std::ofstream(dir + "/renamed.safetensors") << "\x80\x02}q\x00.";
  EXPECT_NE(open_error(dir + "/renamed.safetensors").find("loading a pickle can run any code"), std::string::npos);
  EXPECT_NE(open_error(fixture_model(), import_options([](ImportOptions& o) { o.prediction_type = "v_prediction"; }))
                .find("--prediction-type applies to single-file checkpoints"),
            std::string::npos);
}

TEST(SingleFile, TheTokenizerComesFromTheOptionTheFileOrTheBundledVocabulary) {
  const DiffusersCheckpoint chosen = DiffusersCheckpoint::open(
      fixture_single_file(),
      import_options([](ImportOptions& o) { o.tokenizer_dir = test::fixture_path("clip-tokenizer-sd2"); }));
  EXPECT_EQ(chosen.tokenizer().folder, test::fixture_path("clip-tokenizer-sd2"));
  EXPECT_EQ(checkpoint_tokenizer(chosen).pad_id(), 0);
  const DiffusersCheckpoint embedded = DiffusersCheckpoint::open(fixture_single_file());
  EXPECT_EQ(checkpoint_tokenizer(embedded).pad_id(), 49407);
  const std::string bare = edited("single-bare", [](FileContent& c) {
    std::erase_if(c.metadata, [](const auto& item) { return item.first.rfind("websd.tokenizer.", 0) == 0; });
  });
  const DiffusersCheckpoint bundled = DiffusersCheckpoint::open(bare);
  EXPECT_EQ(bundled.tokenizer().bundled_pad, "<|endoftext|>");
  EXPECT_EQ(checkpoint_tokenizer(bundled).encode("a photo"), checkpoint_tokenizer(embedded).encode("a photo"));
}

TEST(SingleFile, WritersRefuseToOverwriteTheirSource) {
  const DiffusersCheckpoint file = DiffusersCheckpoint::open(fixture_single_file());
  EXPECT_NE(test::error_of([&] {
              single_file_write(file, fixture_single_file());
            }).find("is a weights file of the checkpoint"),
            std::string::npos);
  const std::string copy = test::make_temp_dir("writer-source") + "/model";
  diffusers_folder_write(file, copy);
  EXPECT_NE(test::error_of([&] {
              diffusers_folder_write(DiffusersCheckpoint::open(copy), copy + "/inner");
            }).find("lies inside the checkpoint being converted"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
