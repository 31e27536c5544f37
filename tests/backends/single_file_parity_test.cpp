// A checkpoint written as a single file by websd's converter generates bit-identical latents to the
// diffusers folder it came from: the fixture (SD 1.x, CLIP) and an SD 2.x-style variant of it
// (OpenCLIP layout, linear projections, v-prediction given by --prediction-type).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backends/checkpoint_backend.h"
#include "import/checkpoint_tokenizer.h"
#include "import/single_file_writer.h"
#include "io/json_file.h"
#include "io/safetensors_writer.h"
#include "models/model_presets.h"
#include "pipeline/pipeline.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const DiffusersCheckpoint> open(const std::string& path, const ImportOptions& options = {}) {
  return std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(path, options));
}

HostTensor final_latents(const std::shared_ptr<const DiffusersCheckpoint>& checkpoint) {
  backends::CheckpointBackend backend(checkpoint);
  const ClipTokenizer tokenizer = checkpoint_tokenizer(*checkpoint);
  const auto scheduler =
      schedulers::create_scheduler(checkpoint->scheduler_config(), "", checkpoint->scheduler_config_origin());
  GenerationRequest request;
  request.params.prompt = "a watercolor fox in the snow";
  request.params.negative_prompt = "blurry";
  request.params.steps = 3;
  request.params.seed = 7;
  request = validate_request(request, backend.info(), *scheduler);
  HostTensor latents;
  Pipeline(backend, tokenizer).generate(request, *scheduler, [&](const GeneratedImage& image) {
    latents = image.latents;
  });
  return latents;
}

TEST(SingleFileParity, TheFixtureAsASingleFileGeneratesBitIdenticalLatents) {
  const std::string model = test::fixture_path("tiny-sd15/model");
  const std::string file = test::make_temp_dir("parity-sd1") + "/tiny.safetensors";
  single_file_write(DiffusersCheckpoint::open(model), file);
  const HostTensor folder_latents = final_latents(open(model));
  const HostTensor file_latents = final_latents(open(file));
  EXPECT_EQ(folder_latents.shape, file_latents.shape);
  EXPECT_TRUE(folder_latents.data == file_latents.data);
}

void set_scheduler_class(const std::string& dir, const nlohmann::json& class_name) {
  nlohmann::json index = json_read_file(dir + "/model_index.json");
  index["scheduler"] = {class_name.is_null() ? nullptr : nlohmann::json("diffusers"), class_name};
  std::ofstream(dir + "/model_index.json") << index.dump(2);
}

// The fixture made SD 2.x-like: a gelu text encoder (written as OpenCLIP), Linear proj_in/proj_out
// (the 1x1 conv weights reshaped) and SD 2.1's v-prediction DDIM scheduler.
std::string write_sd2_style_folder() {
  const std::string source = test::fixture_path("tiny-sd15/model");
  const std::string dir = test::make_temp_dir("parity-sd2") + "/model";
  fs::copy(source, dir, fs::copy_options::recursive);
  nlohmann::json text = json_read_file(dir + "/text_encoder/config.json");
  text["hidden_act"] = "gelu";
  std::ofstream(dir + "/text_encoder/config.json") << text.dump(2);
  nlohmann::json unet = json_read_file(dir + "/unet/config.json");
  unet["use_linear_projection"] = true;
  std::ofstream(dir + "/unet/config.json") << unet.dump(2);
  const std::string weights = dir + "/unet/diffusion_pytorch_model.safetensors";
  std::vector<SafetensorsTensorView> views;
  {
    const SafetensorsFile file(source + "/unet/diffusion_pytorch_model.safetensors");
    for (const auto& entry : file.entries()) {
      Shape shape = entry.shape;
      const bool projection = entry.name.find(".proj_in.weight") != std::string::npos ||
                              entry.name.find(".proj_out.weight") != std::string::npos;
      if (projection) shape.resize(2);
      views.push_back({entry.name, entry.dtype, shape, file.bytes(entry)});
    }
    fs::remove(weights);
    safetensors_write(weights, views);
  }
  fs::remove_all(dir + "/scheduler");
  set_scheduler_class(dir, nullptr);
  return dir;
}

TEST(SingleFileParity, AnSd2StyleSingleFileWithThePredictionTypeOptionGeneratesBitIdenticalLatents) {
  const std::string folder = write_sd2_style_folder();
  const std::string file = test::make_temp_dir("parity-sd2-file") + "/model.safetensors";
  // Written without a scheduler: the single file gets SD 2.x's scheduler and the option's prediction type.
  const SingleFileWriteReport report = single_file_write(DiffusersCheckpoint::open(folder), file);
  EXPECT_EQ(report.layout, "SD 2.x (OpenCLIP)");
  fs::create_directories(folder + "/scheduler");
  std::ofstream(folder + "/scheduler/scheduler_config.json") << model_preset("sd21").scheduler;
  set_scheduler_class(folder, "DDIMScheduler");
  ImportOptions options;
  options.prediction_type = "v_prediction";
  const auto single = open(file, options);
  EXPECT_EQ(single->family(), "SD 2.x");
  EXPECT_EQ(single->scheduler_config().value("prediction_type", ""), "v_prediction");
  const HostTensor folder_latents = final_latents(open(folder));
  const HostTensor file_latents = final_latents(single);
  EXPECT_TRUE(folder_latents.data == file_latents.data);
  // The epsilon reading of the same weights is another model: the option is what made them agree.
  options.prediction_type = "epsilon";
  EXPECT_FALSE(final_latents(open(file, options)).data == folder_latents.data);
}

}  // namespace
}  // namespace websd
