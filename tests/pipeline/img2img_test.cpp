// img2img on the fake backend: the encoded image, the order of random draws (latent sample, then
// add_noise's noise, then the scheduler's), and the first kept step.
#include "pipeline/img2img.h"

#include <gtest/gtest.h>

#include <cmath>

#include "pipeline/image_tensor.h"
#include "pipeline_test_support.h"

namespace websd {
namespace {

RgbImage gradient_image(int width, int height) {
  RgbImage image{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width * height * 3))};
  for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<std::uint8_t>((i * 37) % 256);
  return image;
}

GenerationRequest img2img_request(int steps, double strength) {
  GenerationRequest request = test::small_request(steps);
  request.init_image = gradient_image(32, 32);
  request.params.strength = strength;
  return request;
}

// The starting latents written out from the fixtures README, independently of img2img_start.
HostTensor reference_start(test::FakeBackend& backend, const RgbImage& image, schedulers::Scheduler& scheduler,
                           int first_kept, TorchGenerator& generator) {
  const auto [mean, logvar] = backend.vae_encode(image_to_signed_tensor(image));
  const HostTensor sample_noise = generator.randn(mean.shape);
  HostTensor latents(mean.shape);
  for (std::size_t i = 0; i < latents.data.size(); ++i) {
    const float sample = mean.data[i] + std::exp(0.5f * logvar.data[i]) * sample_noise.data[i];
    latents.data[i] = 0.18215f * sample;
  }
  scheduler.set_begin_index(first_kept);
  const HostTensor noise = generator.randn(mean.shape);
  return scheduler.add_noise(latents, noise, scheduler.timesteps()[static_cast<std::size_t>(first_kept)]);
}

TEST(Img2Img, EncodesTheImageScaledToSignedRange) {
  test::FakeBackend backend;
  test::run_pipeline(backend, img2img_request(4, 0.5), "ddim");
  ASSERT_EQ(backend.encode_calls.size(), 1u);
  const HostTensor& input = backend.encode_calls[0];
  EXPECT_EQ(input.shape, (Shape{1, 3, 32, 32}));
  // channel-planar layout, x / 255 * 2 - 1: byte i of the image is (37 i) % 256
  EXPECT_FLOAT_EQ(input.data[1], 2.0f * (111.0f / 255.0f) - 1.0f);       // pixel 1 red = byte 3
  EXPECT_FLOAT_EQ(input.data[32 * 32], 2.0f * (37.0f / 255.0f) - 1.0f);  // pixel 0 green = byte 1
}

TEST(Img2Img, RunsTheLastIntStepsTimesStrengthSteps) {
  test::FakeBackend backend;
  test::run_pipeline(backend, img2img_request(10, 0.6), "ddim");
  auto scheduler = schedulers::create_scheduler_by_name("ddim");
  scheduler->set_timesteps(10);
  ASSERT_EQ(backend.unet_calls.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(backend.unet_calls[i].timestep, scheduler->timesteps()[4 + i]);
}

TEST(Img2Img, DrawsTheLatentSampleThenTheAddedNoise) {
  test::FakeBackend backend;
  const GenerationRequest request = img2img_request(8, 0.6);
  test::run_pipeline(backend, request, "ddim");
  auto scheduler = schedulers::create_scheduler_by_name("ddim");
  scheduler->set_timesteps(8);
  TorchGenerator generator(42);
  test::FakeBackend reference_backend;
  const HostTensor start = reference_start(reference_backend, *request.init_image, *scheduler, 4, generator);
  // DDIM's model input is the sample itself: row 0 of the first UNet call is the noised start.
  const std::vector<float> first_row(backend.unet_calls[0].sample.data.begin(),
                                     backend.unet_calls[0].sample.data.begin() + 64);
  EXPECT_EQ(first_row, start.data);
}

TEST(Img2Img, StochasticSchedulerDrawsAfterTheStartOnTheSameStream) {
  test::FakeBackend backend;
  const GenerationRequest request = img2img_request(8, 0.75);
  const auto images = test::run_pipeline(backend, request, "euler_a");
  EXPECT_EQ(backend.unet_calls.size(), 6u);
  auto scheduler = schedulers::create_scheduler_by_name("euler_a");
  scheduler->set_timesteps(8);
  TorchGenerator generator(42);
  test::FakeBackend reference_backend;
  const HostTensor start = reference_start(reference_backend, *request.init_image, *scheduler, 2, generator);
  const std::vector<double> kept(scheduler->timesteps().begin() + 2, scheduler->timesteps().end());
  const HostTensor expected = test::reference_loop(*scheduler, kept, request.params, generator, start);
  EXPECT_EQ(images[0].latents.data, expected.data);
  EXPECT_NE(images[0].parameters.find("Denoising strength: 0.75"), std::string::npos) << images[0].parameters;
}

TEST(Img2Img, EncodesTheImageOnceForTheWholeBatch) {
  test::FakeBackend backend;
  GenerationRequest request = img2img_request(4, 0.5);
  request.params.batch_count = 2;
  const auto images = test::run_pipeline(backend, request, "ddim");
  EXPECT_EQ(backend.encode_calls.size(), 1u);
  ASSERT_EQ(images.size(), 2u);
  EXPECT_NE(images[0].latents.data, images[1].latents.data);  // seeds 42 and 43
}

TEST(Img2Img, ClampsLogvarAsDiffusersDoes) {
  struct WideLogvar : test::FakeBackend {
    std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) override {
      auto [mean, logvar] = FakeBackend::vae_encode(image);
      std::fill(logvar.data.begin(), logvar.data.end(), 100.0f);
      return {mean, logvar};
    }
  } backend;
  auto [mean, logvar] = backend.vae_encode(image_to_signed_tensor(gradient_image(16, 8)));
  const LatentDistribution distribution = latent_distribution(mean, logvar, backend.info(), 8, 16);
  EXPECT_EQ(distribution.mean.shape, (Shape{1, 4, 1, 2}));
  EXPECT_EQ(distribution.logvar.data, std::vector<float>(8, 20.0f));
}

}  // namespace
}  // namespace websd
