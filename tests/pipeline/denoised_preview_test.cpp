// denoised_preview (pipeline/denoised_preview.h): the x0 a step's prediction points to. Checked where
// the answer is known exactly: at the last step of euler (final sigma 0) and ddim (final alpha 1) the
// scheduler's own step lands on x0, for epsilon and v predictions; at the first euler step x0 is
// sample - sigma * noise. And GenerationSession keeps one per finished step.
#include "pipeline/denoised_preview.h"

#include <gtest/gtest.h>

#include <cmath>

#include "pipeline/generation_session.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "pipeline_test_support.h"

namespace websd {
namespace {

HostTensor noise(std::uint64_t seed) { return TorchGenerator(seed).randn({1, 4, 3, 5}); }

float max_abs_difference(const HostTensor& a, const HostTensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  float worst = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) worst = std::max(worst, std::abs(a.data[i] - b.data[i]));
  return worst;
}

TEST(DenoisedPreview, TheLastStepOfEulerAndDdimLandsOnIt) {
  struct Case {
    const char* class_name;
    const char* prediction;
  };
  for (const Case c : {Case{"EulerDiscreteScheduler", "epsilon"}, Case{"EulerDiscreteScheduler", "v_prediction"},
                       Case{"DDIMScheduler", "epsilon"}, Case{"DDIMScheduler", "v_prediction"}}) {
    SCOPED_TRACE(std::string(c.class_name) + " " + c.prediction);
    // DDIM clips its x0 to [-1, 1] by default, which previews do not: off here.
    const nlohmann::json config = {
        {"_class_name", c.class_name}, {"prediction_type", c.prediction}, {"clip_sample", false}};
    auto scheduler = schedulers::create_scheduler(config, "", "test");
    scheduler->set_timesteps(5);
    HostTensor sample = noise(1);
    for (int i = 0; i < 5; ++i) {
      const HostTensor prediction = noise(10 + i);
      const HostTensor preview = denoised_preview(*scheduler, i, prediction, sample);
      sample = scheduler->step(prediction, scheduler->timesteps()[i], sample);
      if (i == 4) {
        EXPECT_LT(max_abs_difference(preview, sample), 2e-5f);
      }
    }
  }
}

TEST(DenoisedPreview, SigmaSpaceSamplesLoseSigmaTimesTheNoise) {
  auto scheduler = schedulers::create_scheduler_by_name("euler");
  scheduler->set_timesteps(10);
  const HostTensor sample = noise(2);
  const HostTensor prediction = noise(3);
  const HostTensor preview = denoised_preview(*scheduler, 0, prediction, sample);
  const auto sigma = static_cast<float>(scheduler->sigmas()[0]);
  ASSERT_GT(sigma, 1.0f);
  for (std::size_t i = 0; i < sample.data.size(); ++i) {
    EXPECT_FLOAT_EQ(preview.data[i], sample.data[i] - sigma * prediction.data[i]);
  }
}

TEST(DenoisedPreview, TheSessionKeepsOnePerFinishedStep) {
  test::FakeBackend backend;
  auto scheduler = schedulers::create_scheduler_by_name("euler");
  GenerationSession session(backend, test::fixture_tokenizer(), test::small_request(3), *scheduler);
  session.prepare();
  session.start_image(0);
  EXPECT_TRUE(session.preview_latents().data.empty()) << "no step is finished yet";
  ASSERT_TRUE(session.submit_step());
  EXPECT_TRUE(session.preview_latents().data.empty()) << "the step is only submitted";
  session.finish_step();
  const HostTensor first = session.preview_latents();
  EXPECT_EQ(first.shape.size(), 4u);
  EXPECT_EQ(first.shape[1], backend.info().latent_channels);
  session.step();
  session.step();
  // Euler's last step lands on its x0: the preview is the final sample.
  const GeneratedImage image = session.decode();
  EXPECT_LT(max_abs_difference(session.preview_latents(), image.latents), 1e-4f);
  EXPECT_GT(max_abs_difference(first, image.latents), 1e-3f) << "the first step's x0 is not the final one";
}

}  // namespace
}  // namespace websd
