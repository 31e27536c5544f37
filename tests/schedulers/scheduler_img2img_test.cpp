// img2img entry points, checked by hand against the formulas: start_at_strength keeps the last
// int(n * strength) steps (times the solver order) and sets the begin index where diffusers has
// set_begin_index; add_noise noises to the first kept timestep; the step counter starts there.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "support/fixtures.h"

namespace websd::schedulers {
namespace {

nlohmann::json sd15_config(const std::string& class_name) {
  return {{"_class_name", class_name}, {"beta_schedule", "scaled_linear"}, {"beta_start", 0.00085}, {"beta_end", 0.012},
          {"steps_offset", 1},         {"set_alpha_to_one", false},        {"clip_sample", false}};
}

const HostTensor kSample({1, 1, 2, 2}, {0.5f, -1.0f, 0.25f, 2.0f});
const HostTensor kNoise({1, 1, 2, 2}, {1.0f, 0.5f, -0.5f, 0.1f});

void expect_values(const HostTensor& actual, const std::vector<double>& expected, double tolerance = 1e-6) {
  ASSERT_EQ(actual.data.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual.data[i], expected[i], tolerance) << i;
}

TEST(Img2Img, DdimKeepsTheLastStepsAndNoisesWithAlphasCumprod) {
  const auto ddim = create_scheduler(sd15_config("DDIMScheduler"), "", "test");
  ddim->set_timesteps(10);
  EXPECT_FALSE(ddim->has_begin_index());
  const auto kept = ddim->start_at_strength(0.6);  // int(10 * 0.6) = 6 steps
  EXPECT_EQ(kept, (std::vector<double>{501, 401, 301, 201, 101, 1}));
  const double alpha = ddim->alphas_cumprod()[501];
  std::vector<double> expected;
  for (std::size_t i = 0; i < 4; ++i) {
    expected.push_back(std::sqrt(alpha) * kSample.data[i] + std::sqrt(1 - alpha) * kNoise.data[i]);
  }
  expect_values(ddim->add_noise(kSample, kNoise, kept.front()), expected);
}

TEST(Img2Img, EulerStartsItsStepCounterAtTheBeginIndex) {
  const auto euler = create_scheduler_from_file(test::fixture_path("tiny-sd15/reference/scheduler-euler.json"));
  euler->set_timesteps(8);
  const auto kept = euler->start_at_strength(0.75);  // 6 of 8 steps: begin index 2
  ASSERT_EQ(kept.size(), 6u);
  EXPECT_EQ(kept.front(), euler->timesteps()[2]);
  const double sigma = euler->sigmas()[2];
  const double next_sigma = euler->sigmas()[3];

  std::vector<double> noisy;
  std::vector<double> scaled;
  std::vector<double> stepped;
  for (std::size_t i = 0; i < 4; ++i) {
    noisy.push_back(kSample.data[i] + sigma * kNoise.data[i]);
    scaled.push_back(kSample.data[i] / std::sqrt(sigma * sigma + 1));
    // epsilon: x0 = x - sigma * eps, so the derivative is eps and x moves by eps * (next_sigma - sigma).
    stepped.push_back(kSample.data[i] + kNoise.data[i] * (next_sigma - sigma));
  }
  expect_values(euler->add_noise(kSample, kNoise, kept.front()), noisy, 1e-5);
  expect_values(euler->scale_model_input(kSample, kept.front()), scaled);
  expect_values(euler->step(kNoise, kept.front(), kSample), stepped, 1e-5);
}

TEST(Img2Img, HeunOffsetsTheBeginIndexByItsOrder) {
  const auto heun = create_scheduler(sd15_config("HeunDiscreteScheduler"), "", "test");
  heun->set_timesteps(4);                          // 7 evaluations: t0, t1, t1, t2, t2, t3, t3
  const auto kept = heun->start_at_strength(0.5);  // 2 of 4 steps: begin index 2 * order = 4
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept, std::vector<double>(heun->timesteps().begin() + 4, heun->timesteps().end()));
  const double sigma = heun->sigmas()[4];
  std::vector<double> noisy;
  for (std::size_t i = 0; i < 4; ++i) noisy.push_back(kSample.data[i] + sigma * kNoise.data[i]);
  expect_values(heun->add_noise(kSample, kNoise, kept.front()), noisy, 1e-5);
  HostTensor x = heun->add_noise(kSample, kNoise, kept.front());
  for (const double t : kept) x = heun->step(heun->scale_model_input(x, t), t, x);
  for (const float value : x.data) EXPECT_TRUE(std::isfinite(value));
}

TEST(Img2Img, DpmSolverNoisesWithTheVariancePreservingCoefficients) {
  const auto dpm = create_scheduler(sd15_config("DPMSolverMultistepScheduler"), "", "test");
  dpm->set_timesteps(10);
  const auto kept = dpm->start_at_strength(0.3);  // 3 of 10 steps: begin index 7
  EXPECT_EQ(kept, std::vector<double>(dpm->timesteps().begin() + 7, dpm->timesteps().end()));
  const double sigma = dpm->sigmas()[7];
  const double alpha = 1 / std::sqrt(sigma * sigma + 1);
  std::vector<double> expected;
  for (std::size_t i = 0; i < 4; ++i) expected.push_back(alpha * kSample.data[i] + sigma * alpha * kNoise.data[i]);
  HostTensor x = dpm->add_noise(kSample, kNoise, kept.front());
  expect_values(x, expected);
  for (const double t : kept) x = dpm->step(kNoise, t, x);
  for (const float value : x.data) EXPECT_TRUE(std::isfinite(value));
}

TEST(Img2Img, LcmDrawsNoiseOnlyBeforeItsLastStep) {
  const auto lcm = create_scheduler(sd15_config("LCMScheduler"), "", "test");
  lcm->set_timesteps(4);  // 999, 759, 499, 259
  const auto kept = lcm->start_at_strength(0.5);
  EXPECT_EQ(kept, (std::vector<double>{499, 259}));

  TorchGenerator generator(7);
  const HostTensor first = lcm->step(kNoise, kept[0], kSample, generator);
  // By hand: x0 from epsilon, consistency boundary scalings at 4990, re-noised to t = 259 with the
  // generator's first draw.
  TorchGenerator reference(7);
  const HostTensor drawn = reference.randn(kSample.shape);
  const double alpha = lcm->alphas_cumprod()[499];
  const double alpha_next = lcm->alphas_cumprod()[259];
  const double scaled = 4990.0;
  const double skip = 0.25 / (scaled * scaled + 0.25);
  const double out = scaled / std::sqrt(scaled * scaled + 0.25);
  std::vector<double> expected;
  for (std::size_t i = 0; i < 4; ++i) {
    const double x0 = (kSample.data[i] - std::sqrt(1 - alpha) * kNoise.data[i]) / std::sqrt(alpha);
    const double denoised = out * x0 + skip * kSample.data[i];
    expected.push_back(std::sqrt(alpha_next) * denoised + std::sqrt(1 - alpha_next) * drawn.data[i]);
  }
  expect_values(first, expected, 1e-5);

  // The last step returns the denoised sample and leaves the generator untouched.
  lcm->step(kNoise, kept[1], first, generator);
  EXPECT_EQ(generator.randn(kSample.shape).data, reference.randn(kSample.shape).data);
}

TEST(Img2Img, StrengthOneKeepsEverythingAndBadStrengthsAreRefused) {
  const auto euler = create_scheduler(sd15_config("EulerDiscreteScheduler"), "", "test");
  EXPECT_THROW(euler->start_at_strength(0.5), Error);  // before set_timesteps
  euler->set_timesteps(5);
  EXPECT_EQ(euler->start_at_strength(1.0), euler->timesteps());
  for (const double strength : {-0.1, 1.5, std::nan("")}) EXPECT_THROW(euler->start_at_strength(strength), Error);
  EXPECT_THROW(euler->start_at_strength(0.1), Error);  // int(5 * 0.1) = 0 steps
}

TEST(Img2Img, PndmSlicesItsScheduleWithoutABeginIndex) {
  nlohmann::json config = sd15_config("PNDMScheduler");
  config["skip_prk_steps"] = true;
  const auto pndm = create_scheduler(config, "", "test");
  pndm->set_timesteps(4);  // 751, 501, 501, 251, 1
  EXPECT_FALSE(pndm->has_begin_index());
  EXPECT_EQ(pndm->start_at_strength(0.5), (std::vector<double>{501, 251, 1}));
}

}  // namespace
}  // namespace websd::schedulers
