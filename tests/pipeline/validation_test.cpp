// Request validation: each bad parameter is one websd::Error naming it, raised before any backend call.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "pipeline_test_support.h"

namespace websd {
namespace {

// Runs `request` expecting an Error whose message contains `expected`, and no backend call at all.
void expect_rejected(const GenerationRequest& request, const std::string& expected,
                     std::int64_t latent_size_multiple = 1) {
  test::FakeBackend backend;
  backend.info_.latent_size_multiple = latent_size_multiple;
  try {
    test::run_pipeline(backend, request, "ddim");
    FAIL() << "accepted a request that should fail with: " << expected;
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << "one line: " << error.what();
  }
  EXPECT_TRUE(backend.text_calls.empty());
  EXPECT_TRUE(backend.unet_calls.empty());
}

RgbImage blank_image(int width, int height) {
  return {width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width * height * 3), 128)};
}

TEST(Validation, SizeMustBeAPositiveMultipleOfEight) {
  GenerationRequest request = test::small_request(2);
  request.params.width = 100;
  expect_rejected(request, "width 100 is not a positive multiple of 8");
  request.params.width = 64;
  request.params.height = -8;
  expect_rejected(request, "height -8 is not a positive multiple of 8");
}

TEST(Validation, SizeMustFitTheUnetsLevels) {
  GenerationRequest request = test::small_request(2);
  request.params.width = 40;
  request.params.height = 32;
  expect_rejected(request, "width 40 is not a positive multiple of 32", 4);
}

TEST(Validation, StepsBatchCountAndGuidance) {
  GenerationRequest request = test::small_request(0);
  expect_rejected(request, "steps 0");
  request = test::small_request(2);
  request.params.steps = 5000;
  expect_rejected(request, "cannot run 5000 inference steps");
  request = test::small_request(2);
  request.params.batch_count = 0;
  expect_rejected(request, "batch count 0");
  request = test::small_request(2);
  request.params.guidance_scale = std::numeric_limits<double>::quiet_NaN();
  expect_rejected(request, "guidance scale");
}

TEST(Validation, StrengthMustLieInZeroToOne) {
  GenerationRequest request = test::small_request(4);
  request.init_image = blank_image(32, 32);
  request.params.strength = 0.0;
  expect_rejected(request, "strength 0 is outside (0, 1]");
  request.params.strength = 1.5;
  expect_rejected(request, "strength 1.5 is outside (0, 1]");
  request.params.strength = 0.2;  // int(4 * 0.2) = 0 steps
  expect_rejected(request, "keeps none of the 4 steps");
}

TEST(Validation, InitImageMustHaveTheRequestedSize) {
  GenerationRequest request = test::small_request(2);
  request.init_image = blank_image(40, 32);
  request.params.width = 32;
  request.params.height = 32;
  expect_rejected(request, "init image is 40x32 but the requested size is 32x32");
  request.params.width = 0;
  request.params.height = 0;
  request.init_image = blank_image(36, 32);  // its own size, not a multiple of 8
  expect_rejected(request, "width 36 is not a positive multiple of 8");
}

TEST(Validation, InitLatentsMustMatchBatchAndSize) {
  GenerationRequest request = test::small_request(2);
  request.init_latents = HostTensor({1, 4, 4, 4});
  request.params.batch_count = 2;
  expect_rejected(request, "init latents have shape [1,4,4,4], expected [2,4,4,4]");
  request.params.batch_count = 1;
  request.init_latents = HostTensor({4, 4, 4});
  expect_rejected(request, "init latents have shape [4,4,4]");
  request.init_latents = HostTensor({1, 4, 4, 4});
  request.init_image = blank_image(32, 32);
  expect_rejected(request, "init latents and an init image were both given");
}

TEST(Validation, SizeComesFromTheInitLatentsWhenNotGiven) {
  test::FakeBackend backend;
  GenerationRequest request = test::small_request(1);
  request.init_latents = HostTensor({1, 4, 2, 3});
  const auto images = test::run_pipeline(backend, request, "ddim");
  EXPECT_EQ(images[0].image.width, 24);
  EXPECT_EQ(images[0].image.height, 16);
}

}  // namespace
}  // namespace websd
