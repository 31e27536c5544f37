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
      while (session.submit_step()) {
        // What a caller does while it awaits the device (here: another generator's draws) must not matter.
        TorchGenerator(7).randn({16});
        session.finish_step();
      }
      EXPECT_EQ(session.steps_done(), 4);
      EXPECT_FALSE(session.step()) << "no step remains";
      session.submit_decode();
      TorchGenerator(8).randn({16});
      stepped.images.push_back(session.finish_decode());
    }
    ASSERT_EQ(stepped.images.size(), at_once.images.size());
    for (std::size_t i = 0; i < at_once.images.size(); ++i) {
      EXPECT_EQ(stepped.images[i].seed, at_once.images[i].seed);
      EXPECT_EQ(stepped.images[i].latents.data, at_once.images[i].latents.data);
      EXPECT_EQ(stepped.images[i].rgba.data, at_once.images[i].rgba.data);
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
  EXPECT_NE(error_of([&] { session.finish_prepare(); }).find("finish_prepare without a submitted part of prepare"),
            std::string::npos);
  EXPECT_TRUE(session.submit_prepare());
  EXPECT_TRUE(session.ready());  // the fake computes on the host: nothing to await
  EXPECT_NE(error_of([&] { session.submit_prepare(); }).find("submit_prepare while a part of the run is submitted"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.start_image(0); }).find("start_image while a part of the run is submitted"),
            std::string::npos);
  session.finish_prepare();
  EXPECT_FALSE(session.submit_prepare()) << "txt2img is prepared after the prompt";
  EXPECT_NE(error_of([&] { session.start_image(1); }).find("image 1 is not one of the run's 1"), std::string::npos);
  session.start_image(0);
  session.step();
  EXPECT_NE(error_of([&] { session.decode(); }).find("decode before the image's last denoising step (1 of 2 done)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.finish_step(); }).find("finish_step without a submitted step"), std::string::npos);
  EXPECT_TRUE(session.submit_step());
  EXPECT_NE(error_of([&] { session.submit_step(); }).find("submit_step while a part of the run is submitted"),
            std::string::npos);
  session.finish_step();
  EXPECT_NE(error_of([&] { session.finish_decode(); }).find("finish_decode without a submitted decode"),
            std::string::npos);
  session.submit_decode();
  EXPECT_NE(error_of([&] { session.finish_step(); }).find("finish_step without a submitted step"), std::string::npos);
  EXPECT_EQ(session.finish_decode().index, 0);
}

// A fake whose UNet reports three parts done per call, as a compiled backend reports its launches.
class ReportingBackend final : public FakeBackend {
 public:
  void set_call_progress(CallProgress progress) override { progress_ = std::move(progress); }
  bool reporting() const { return static_cast<bool>(progress_); }
  HostTensor unet_on_host(const HostTensor& sample, double timestep, const HostTensor& context) override {
    for (std::size_t part = 1; part <= 3; ++part) {
      if (progress_) progress_(part, 3);
    }
    return FakeBackend::unet_on_host(sample, timestep, context);
  }

 private:
  CallProgress progress_;
};

TEST(GenerationSession, ReportsProgressWithinEachStepWhileItLives) {
  ReportingBackend backend;
  auto scheduler = schedulers::create_scheduler_by_name("ddim");
  std::vector<std::string> events;
  {
    GenerationSession session(
        backend, test::fixture_tokenizer(), test::small_request(2), *scheduler, [&events](const ProgressEvent& e) {
          std::string text = e.stage + " " + std::to_string(e.step) + "/" + std::to_string(e.total_steps);
          if (e.parts > 0) text += " part " + std::to_string(e.part) + "/" + std::to_string(e.parts);
          events.push_back(text);
        });
    EXPECT_TRUE(backend.reporting());
    session.prepare();
    session.start_image(0);
    session.step();
  }
  EXPECT_FALSE(backend.reporting()) << "the session's callback is removed with it";
  EXPECT_EQ(events,
            (std::vector<std::string>{"encode prompt 0/1", "encode prompt 1/1", "denoise 0/2", "denoise 0/2 part 1/3",
                                      "denoise 0/2 part 2/3", "denoise 0/2 part 3/3", "denoise 1/2"}));
  // Without a progress callback the backend is never asked to report.
  GenerationSession quiet(backend, test::fixture_tokenizer(), test::small_request(2), *scheduler);
  EXPECT_FALSE(backend.reporting());
}

// A backend that counts what crosses between host and device, around the fake.
class TransferCounter final : public DiffusionBackend {
 public:
  const ModelInfo& info() const override { return inner.info(); }
  HostTensor encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) override {
    return inner.encode_text(ids, batch);
  }
  std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) override { return inner.vae_encode(image); }
  DeviceTensor upload(const HostTensor& tensor) override {
    uploads.push_back(shape_to_string(tensor.shape));
    return inner.upload(tensor);
  }
  TensorDownload download(const DeviceTensor& tensor) override {
    downloads.push_back(shape_to_string(tensor.shape()));
    return inner.download(tensor);
  }
  DeviceTensor unet(const DeviceTensor& sample, double timestep, const DeviceTensor& context) override {
    return inner.unet(sample, timestep, context);
  }
  DeviceTensor unet_guided(const DeviceTensor& sample, double timestep, const DeviceTensor& context,
                           double guidance_scale) override {
    guided_steps += 1;
    return inner.unet_guided(sample, timestep, context, guidance_scale);
  }
  DeviceTensor vae_decode(const DeviceTensor& latents) override { return inner.vae_decode(latents); }
  DeviceTensor image_to_rgba(const DeviceTensor& image) override { return inner.image_to_rgba(image); }

  FakeBackend inner;
  std::vector<std::string> uploads, downloads;
  int guided_steps = 0;
};

TEST(GenerationSession, OnlyTheSchedulersTensorsCrossPerStepAndTheContextOnce) {
  TransferCounter backend;
  auto scheduler = schedulers::create_scheduler_by_name("euler_a");
  GenerationSession session(backend, test::fixture_tokenizer(), two_images(3), *scheduler);
  session.prepare();
  EXPECT_EQ(backend.uploads, (std::vector<std::string>{"[2,77,8]"}));  // the context, for the whole run
  for (int i = 0; i < 2; ++i) {
    session.start_image(i);
    while (session.step()) {
    }
    session.decode();
  }
  // Per step the model input goes up and the guided prediction comes down; per image the latents
  // go up and the RGBA image (32x32) comes down. The context is never sent again.
  std::vector<std::string> uploads{"[2,77,8]"}, downloads;
  for (int image = 0; image < 2; ++image) {
    for (int step = 0; step < 3; ++step) {
      uploads.push_back("[1,4,4,4]");
      downloads.push_back("[1,4,4,4]");
    }
    uploads.push_back("[1,4,4,4]");
    downloads.push_back("[32,32,4]");
  }
  EXPECT_EQ(backend.uploads, uploads);
  EXPECT_EQ(backend.downloads, downloads);
  EXPECT_EQ(backend.guided_steps, 6);
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
