// GenerationSession (pipeline/generation_session.h) driven one call at a time, as a browser tab
// awaiting its device between steps would: the same images, random draws and progress events as
// Pipeline::generate in one go, with other work between the calls; and its errors for calls out of
// order.
#include "pipeline/generation_session.h"

#include <gtest/gtest.h>

#include "pipeline_test_support.h"
#include "support/error_text.h"

namespace websd {
namespace {

using test::FakeBackend;
using websd::test::error_of;

struct Recorded {
  std::vector<GeneratedImage> images;
  std::vector<std::string> events;
};

ProgressCallback record_into(std::vector<std::string>& events) {
  return [&events](const ProgressEvent& e) {
    events.push_back(e.stage + " " + std::to_string(e.image) + "/" + std::to_string(e.image_count) + " " +
                     std::to_string(e.step) + "/" + std::to_string(e.total_steps));
  };
}

GenerationRequest two_images(int steps) {
  GenerationRequest request = test::small_request(steps);
  request.params.batch_count = 2;
  return request;
}

TEST(GenerationSession, StepByStepGivesWhatGenerateGivesInOneGo) {
  for (const char* scheduler_name : {"euler_a", "dpmpp_2m", "ddim"}) {
    SCOPED_TRACE(scheduler_name);
    FakeBackend at_once_backend;
    Recorded at_once;
    at_once.images = test::run_pipeline(at_once_backend, two_images(4), scheduler_name, record_into(at_once.events));

    FakeBackend backend;
    Recorded stepped;
    auto scheduler = schedulers::create_scheduler_by_name(scheduler_name);
    GenerationSession session(backend, test::fixture_tokenizer(), two_images(4), *scheduler,
                              record_into(stepped.events));
    session.prepare();
    for (int i = 0; i < session.image_count(); ++i) {
      EXPECT_EQ(session.start_image(i), 4);
      while (session.step()) {
        // What a caller does between steps (here: another generator's draws) must not matter.
        TorchGenerator(7).randn({16});
      }
      EXPECT_EQ(session.steps_done(), 4);
      EXPECT_FALSE(session.step()) << "no step remains";
      stepped.images.push_back(session.decode());
    }
    ASSERT_EQ(stepped.images.size(), at_once.images.size());
    for (std::size_t i = 0; i < at_once.images.size(); ++i) {
      EXPECT_EQ(stepped.images[i].seed, at_once.images[i].seed);
      EXPECT_EQ(stepped.images[i].latents.data, at_once.images[i].latents.data);
      EXPECT_EQ(stepped.images[i].image.pixels, at_once.images[i].image.pixels);
      EXPECT_EQ(stepped.images[i].parameters, at_once.images[i].parameters);
    }
    EXPECT_EQ(stepped.events, at_once.events);
  }
}

TEST(GenerationSession, CallsOutOfOrderAreErrors) {
  FakeBackend backend;
  auto scheduler = schedulers::create_scheduler_by_name("ddim");
  GenerationSession session(backend, test::fixture_tokenizer(), test::small_request(2), *scheduler);
  EXPECT_NE(error_of([&] { session.start_image(0); }).find("start_image before prepare"), std::string::npos);
  EXPECT_NE(error_of([&] { session.step(); }).find("step before start_image"), std::string::npos);
  session.prepare();
  EXPECT_NE(error_of([&] { session.start_image(1); }).find("image 1 is not one of the run's 1"), std::string::npos);
  session.start_image(0);
  session.step();
  EXPECT_NE(error_of([&] { session.decode(); }).find("decode before the image's last denoising step (1 of 2 done)"),
            std::string::npos);
  EXPECT_TRUE(session.step());
  EXPECT_EQ(session.decode().index, 0);
}

TEST(GenerationSession, ABadRequestFailsBeforeAnyBackendCall) {
  FakeBackend backend;
  auto scheduler = schedulers::create_scheduler_by_name("ddim");
  GenerationRequest request = test::small_request(0);
  EXPECT_THROW(GenerationSession(backend, test::fixture_tokenizer(), request, *scheduler), Error);
  EXPECT_TRUE(backend.text_calls.empty());
}

}  // namespace
}  // namespace websd
