// An artifact built for several image sizes (`websd build --size WxH` repeated): one copy of the
// weights, the text encoders once, each size's functions running as the checkpoint backend does
// at that size, and a size it lacks refused with the sizes it holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "artifact/artifact.h"
#include "backend_test_support.h"
#include "compiler/build_artifact.h"
#include "io/json_file.h"
#include "pipeline/host_calls.h"
#include "support/error_text.h"
#include "support/fixtures.h"
#include "targets/cpu/codegen/cpu_target.h"

namespace websd {
namespace {

// The fixture model at its own 128x128, then 96x64 (latents 8x12), built once per process.
const std::string& two_size_artifact() {
  static const std::string dir = [] {
    compiler::BuildOptions options;
    options.checkpoint = std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(test::tiny_model_dir()));
    options.out = (std::filesystem::path(test::make_temp_dir("sizes")) / "two.art").string();
    options.sizes = {{0, 0}, {96, 64}, {128, 128}};  // the model's size, another, the model's again
    compiler::build_artifact(options, compiler::cpu_target());
    return options.out;
  }();
  return dir;
}

TEST(ArtifactSizes, OneCopyOfTheWeightsAndTheTextEncodersOnce) {
  const artifact::Artifact two = artifact::Artifact::open(two_size_artifact());
  const artifact::Artifact one = artifact::Artifact::open(test::tiny_artifact_dir());
  // Every weight once; a convolution whose packing depends on the image size (oneDNN picks the
  // blocking per geometry, on some CPUs differently at 96x64) adds only its other packing.
  const auto source_of = [](const std::string& name) { return name.substr(0, name.find('@')); };
  std::set<std::string> one_names, one_sources, two_names;
  for (const auto& weight : one.weights()) {
    one_names.insert(weight.name);
    one_sources.insert(source_of(weight.name));
  }
  for (const auto& weight : two.weights()) two_names.insert(weight.name);
  EXPECT_EQ(two_names.size(), two.weights().size()) << "a weight stored twice";
  for (const auto& name : one_names) EXPECT_TRUE(two_names.contains(name)) << name;
  for (const auto& name : two_names) {
    if (one_names.contains(name)) continue;
    EXPECT_NE(name.find('@'), std::string::npos) << name << ": not a packing";
    EXPECT_TRUE(one_sources.contains(source_of(name))) << name;
  }
  backends::ArtifactBackend backend(two_size_artifact());
  EXPECT_EQ(backend.sizes(), (std::vector<artifact::ImageSize>{{128, 128}, {96, 64}}));
  EXPECT_EQ(backend.width(), 128);
  const std::vector<std::string> names = backend.function_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "clip"), 1);
  EXPECT_EQ(std::count_if(names.begin(), names.end(), [](const std::string& n) { return n.starts_with("clip"); }), 2);
  for (const char* symbol : {"unet_96x64", "unet_b1_96x64", "unet_cfg_96x64", "vae_decode_96x64", "vae_encode_96x64",
                             "image_to_rgba_96x64", "unet_cfg", "vae_decode"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), symbol), names.end()) << symbol;
  }
}

TEST(ArtifactSizes, EachSizeRunsAsTheCheckpointBackendDoes) {
  backends::ArtifactBackend backend(two_size_artifact());
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  for (const auto& [h, w] : {std::pair{8, 12}, std::pair{16, 16}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
    HostTensor sample({1, 4, h, w});
    for (std::size_t i = 0; i < sample.data.size(); ++i) sample.data[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
    const HostTensor compiled = call_unet_guided(backend, sample, 500, context, 7.5);
    const HostTensor host = call_unet_guided(test::tiny_backend(), sample, 500, context, 7.5);
    ASSERT_EQ(compiled.shape, sample.shape);
    EXPECT_LT(test::relative_l2(compiled.data, host.data), 1e-4);  // the fixtures' network tolerance
    const HostTensor image = call_vae_decode(backend, sample);
    EXPECT_EQ(image.shape, (Shape{1, 3, h * 8, w * 8}));
    EXPECT_LT(test::relative_l2(image.data, call_vae_decode(test::tiny_backend(), sample).data), 1e-4);
    if (h == 16) {  // the default size: the very functions of an artifact built for it alone
      EXPECT_EQ(compiled.data, call_unet_guided(test::tiny_artifact_backend(), sample, 500, context, 7.5).data);
    }
  }
}

TEST(ArtifactSizes, ASizeItLacksNamesTheSizesItHolds) {
  backends::ArtifactBackend backend(two_size_artifact());
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  const HostTensor sample({1, 4, 12, 8}, std::vector<float>(4 * 12 * 8, 0.0f));  // 64x96: transposed
  const std::string message = test::error_of([&] { call_unet_guided(backend, sample, 500, context, 7.5); });
  EXPECT_NE(message.find("built for 128x128, 96x64 images; UNet sample [1,4,12,8] does not fit"), std::string::npos)
      << message;
  EXPECT_NE(message.find("rebuild with websd build --size WxH"), std::string::npos) << message;
}

}  // namespace
}  // namespace websd
