// txt2img on the fake backend: prompt batches, the order of random draws, batch count and seeds,
// given latents, decoding and progress.
#include "pipeline/txt2img.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "pipeline_test_support.h"

namespace websd {
namespace {

using test::FakeBackend;
using test::kLatentShape;

using test::context_value;
using test::padded_ids;

TEST(Txt2Img, EncodesNegativeThenPromptOnceAndRunsTheUnetOnThePair) {
  FakeBackend backend;
  const auto images = test::run_pipeline(backend, test::small_request(3), "ddim");
  ASSERT_EQ(backend.text_calls.size(), 1u);
  std::vector<std::int64_t> expected = padded_ids("blurry");
  const auto prompt_ids = padded_ids("a red fox in the snow");
  expected.insert(expected.end(), prompt_ids.begin(), prompt_ids.end());
  EXPECT_EQ(backend.text_calls[0], expected);
  ASSERT_EQ(backend.unet_calls.size(), 3u);
  for (const auto& call : backend.unet_calls) {
    EXPECT_EQ(call.sample.shape, (Shape{2, 4, 4, 4}));
    EXPECT_EQ(call.context.shape, (Shape{2, 77, backend.hidden}));
    EXPECT_FLOAT_EQ(call.context.data.front(), context_value("blurry"));
    EXPECT_FLOAT_EQ(call.context.data.back(), context_value("a red fox in the snow"));
  }
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0].image.width, 32);
  EXPECT_EQ(images[0].image.height, 32);
}

TEST(Txt2Img, GuidanceOneEncodesAndRunsOnlyThePrompt) {
  FakeBackend backend;
  GenerationRequest request = test::small_request(2);
  request.params.guidance_scale = 1.0;
  test::run_pipeline(backend, request, "ddim");
  ASSERT_EQ(backend.text_calls.size(), 1u);
  EXPECT_EQ(backend.text_calls[0], padded_ids("a red fox in the snow"));
  for (const auto& call : backend.unet_calls) EXPECT_EQ(call.sample.shape[0], 1);
}

TEST(Txt2Img, DrawsInitialLatentsFirstThenStepNoiseFromOneStream) {
  FakeBackend backend;
  const GenerationRequest request = test::small_request(4);
  const auto images = test::run_pipeline(backend, request, "euler_a");
  TorchGenerator generator(42);
  const HostTensor noise = generator.randn(kLatentShape);
  auto scheduler = schedulers::create_scheduler_by_name("euler_a");
  scheduler->set_timesteps(4);
  const HostTensor start = txt2img_start_latents(noise, *scheduler);
  // The first UNet input is the scaled initial draw: nothing was drawn before it.
  const HostTensor first_input = scheduler->scale_model_input(start, scheduler->timesteps()[0]);
  const std::vector<float> first_row(backend.unet_calls[0].sample.data.begin(),
                                     backend.unet_calls[0].sample.data.begin() + 64);
  EXPECT_EQ(first_row, first_input.data);
  const HostTensor expected =
      test::reference_loop(*scheduler, scheduler->timesteps(), request.params, generator, start);
  EXPECT_EQ(images[0].latents.data, expected.data);
}

TEST(Txt2Img, InitialLatentsAreMultipliedByInitNoiseSigma) {
  auto scheduler = schedulers::create_scheduler_by_name("euler");
  scheduler->set_timesteps(10);
  ASSERT_GT(scheduler->init_noise_sigma(), 1.0);
  const HostTensor noise(kLatentShape, std::vector<float>(64, 0.5f));
  const HostTensor start = txt2img_start_latents(noise, *scheduler);
  EXPECT_FLOAT_EQ(start.data[7], 0.5f * static_cast<float>(scheduler->init_noise_sigma()));
}

TEST(Txt2Img, BatchCountGivesImageIThePictureOfSeedPlusI) {
  FakeBackend backend;
  GenerationRequest request = test::small_request(3);
  request.params.batch_count = 3;
  request.params.seed = 10;
  const auto images = test::run_pipeline(backend, request, "euler_a");
  ASSERT_EQ(images.size(), 3u);
  EXPECT_EQ(backend.text_calls.size(), 1u);  // the prompt is encoded once per run
  GenerationRequest alone = test::small_request(3);
  alone.params.seed = 11;
  FakeBackend other;
  const auto single = test::run_pipeline(other, alone, "euler_a");
  EXPECT_EQ(images[1].seed, 11u);
  EXPECT_EQ(images[1].latents.data, single[0].latents.data);
  EXPECT_NE(images[0].latents.data, images[1].latents.data);
  EXPECT_NE(images[1].parameters.find("Seed: 11,"), std::string::npos) << images[1].parameters;
}

TEST(Txt2Img, GivenLatentsReplaceTheDrawRowByRow) {
  FakeBackend backend;
  GenerationRequest request = test::small_request(2);
  request.params.batch_count = 2;
  HostTensor latents({2, 4, 4, 4});
  for (std::size_t i = 0; i < latents.data.size(); ++i) latents.data[i] = std::sin(static_cast<float>(i));
  request.init_latents = latents;
  test::run_pipeline(backend, request, "euler");
  auto scheduler = schedulers::create_scheduler_by_name("euler");
  scheduler->set_timesteps(2);
  const HostTensor row = latent_row(latents, 1);
  const HostTensor expected =
      scheduler->scale_model_input(txt2img_start_latents(row, *scheduler), scheduler->timesteps()[0]);
  const test::UnetCall& second_image_first_call = backend.unet_calls[2];
  EXPECT_EQ(
      std::vector<float>(second_image_first_call.sample.data.begin(), second_image_first_call.sample.data.begin() + 64),
      expected.data);
}

TEST(Txt2Img, DecodesLatentsOverScalingFactorAndQuantizes) {
  FakeBackend backend;
  const auto images = test::run_pipeline(backend, test::small_request(2), "ddim");
  ASSERT_EQ(backend.decode_calls.size(), 1u);
  const HostTensor& decoded_input = backend.decode_calls[0];
  for (std::size_t i = 0; i < decoded_input.data.size(); ++i) {
    EXPECT_EQ(decoded_input.data[i], images[0].latents.data[i] / 0.18215f);
  }
  // pixel (0, 0) of channel c comes from latent (c, 0, 0): 255 (x / 2 + 0.5).clamp(0, 1), then rounded
  for (int c = 0; c < 3; ++c) {
    const float unit = std::clamp(decoded_input.data[static_cast<std::size_t>(c * 16)] / 2.0f + 0.5f, 0.0f, 1.0f);
    EXPECT_EQ(images[0].rgba.data[static_cast<std::size_t>(c)], unit * 255.0f);
    EXPECT_EQ(images[0].image.pixels[static_cast<std::size_t>(c)], static_cast<int>(std::nearbyint(unit * 255.0f)));
  }
}

TEST(Txt2Img, ReportsEveryStageAndStep) {
  FakeBackend backend;
  std::vector<std::string> events;
  test::run_pipeline(backend, test::small_request(3), "ddim", [&](const ProgressEvent& event) {
    events.push_back(event.stage + " " + std::to_string(event.step) + "/" + std::to_string(event.total_steps));
  });
  const std::vector<std::string> expected = {"encode prompt 0/1", "encode prompt 1/1", "denoise 0/3", "denoise 1/3",
                                             "denoise 2/3",       "denoise 3/3",       "decode 0/1",  "decode 1/1"};
  EXPECT_EQ(events, expected);
}

TEST(Txt2Img, DefaultSizeIsTheModelSampleSizeTimesTheVaeFactor) {
  FakeBackend backend;
  backend.info_.sample_height = 3;
  backend.info_.sample_width = 3;
  const auto images = test::run_pipeline(backend, test::small_request(1), "ddim");
  EXPECT_EQ(images[0].image.width, 24);
  EXPECT_NE(images[0].parameters.find("Size: 24x24"), std::string::npos);
}

// A UNet whose config says "sample_size": [h, w] defaults to a non-square image, height first.
TEST(Txt2Img, NonSquareSampleSizeGivesANonSquareDefaultImage) {
  FakeBackend backend;
  backend.info_.sample_height = 2;
  backend.info_.sample_width = 3;
  const auto images = test::run_pipeline(backend, test::small_request(1), "ddim");
  EXPECT_EQ(images[0].image.width, 24);
  EXPECT_EQ(images[0].image.height, 16);
  EXPECT_NE(images[0].parameters.find("Size: 24x16"), std::string::npos);
}

}  // namespace
}  // namespace websd
