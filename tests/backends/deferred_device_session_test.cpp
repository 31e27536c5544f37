// A whole generation run of the fixture model's artifact on a device that completes nothing until
// it is polled or waited for (support/deferred_device.h), driven the way a browser tab drives it:
// after each submit, the device is polled (GenerationSession::ready) until the part can be
// finished without blocking. The images, latents and progress events equal those of the same
// run on the CPU device, which completes every call at once; and a prompt's context, read before
// the device ran anything, is not there yet.
#include <gtest/gtest.h>

#include <memory>

#include "backend_test_support.h"
#include "pipeline/generation_session.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"
#include "support/deferred_device.h"

namespace websd {
namespace {

GenerationRequest img2img_request() {
  GenerationRequest request;
  request.params.prompt = "a red boat";
  request.params.negative_prompt = "blurry";
  request.params.steps = 3;
  request.params.guidance_scale = 7.5;
  request.params.batch_count = 2;
  request.params.seed = 42;
  request.params.width = 128;  // the size the fixture artifact is built for
  request.params.height = 128;
  request.params.strength = 0.75;
  RgbImage image{128, 128, std::vector<std::uint8_t>(128 * 128 * 3)};
  for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<std::uint8_t>(i * 7 % 251);
  request.init_image = image;
  return request;
}

struct SessionRun {
  std::vector<GeneratedImage> images;
  std::vector<std::string> events;
  int polls = 0;  // ready() calls that said "not yet"
};

// Every part submitted, awaited by polling, then finished.
SessionRun run_polled(DiffusionBackend& backend, const GenerationRequest& request) {
  SessionRun run;
  const ClipTokenizer tokenizer = load_clip_tokenizer(test::tiny_model_dir());
  const auto scheduler = schedulers::create_scheduler_by_name("euler_a");
  GenerationSession session(backend, tokenizer, request, *scheduler, [&run](const ProgressEvent& e) {
    run.events.push_back(e.stage + " " + std::to_string(e.image) + " " + std::to_string(e.step) + "/" +
                         std::to_string(e.total_steps) + " " + std::to_string(e.part) + "/" + std::to_string(e.parts));
  });
  const auto await = [&] {
    while (!session.ready()) run.polls += 1;
  };
  while (session.submit_prepare()) {
    await();
    session.finish_prepare();
  }
  for (int i = 0; i < session.image_count(); ++i) {
    session.start_image(i);
    while (session.submit_step()) {
      await();
      session.finish_step();
    }
    session.submit_decode();
    await();
    run.images.push_back(session.finish_decode());
  }
  return run;
}

TEST(DeferredDevice, AGenerationSessionThatPollsTheDeviceGivesTheImagesOfTheCpuDevice) {
  const SessionRun direct = run_polled(test::tiny_artifact_backend(), img2img_request());
  EXPECT_EQ(direct.polls, 0) << "the CPU device completes every call before it returns";

  auto owned = std::make_unique<test::DeferredDevice>();
  test::DeferredDevice& device = *owned;
  backends::ArtifactBackend backend(test::tiny_artifact_dir(), {}, backends::Residency::kOneNetwork, std::move(owned));
  const SessionRun deferred = run_polled(backend, img2img_request());
  // The prompt, the init image, 2 x 3 steps and 2 decodes each waited for the device.
  EXPECT_GE(deferred.polls, 10);
  EXPECT_GT(device.enqueued(), 0u);
  EXPECT_EQ(device.pending(), 0u);
  ASSERT_EQ(deferred.images.size(), direct.images.size());
  for (std::size_t i = 0; i < direct.images.size(); ++i) {
    SCOPED_TRACE("image " + std::to_string(i));
    EXPECT_EQ(deferred.images[i].latents.data, direct.images[i].latents.data);
    EXPECT_EQ(deferred.images[i].rgba.data, direct.images[i].rgba.data);
  }
  // Launch progress comes when the device runs the launches (here: while it is polled), so only
  // the stage events are compared.
  std::vector<std::string> stages_direct, stages_deferred;
  for (const auto& e : direct.events) {
    if (e.substr(e.size() - 4) == " 0/0") stages_direct.push_back(e);
  }
  for (const auto& e : deferred.events) {
    if (e.substr(e.size() - 4) == " 0/0") stages_deferred.push_back(e);
  }
  EXPECT_EQ(stages_deferred, stages_direct);
}

TEST(DeferredDevice, ATextEncodingReadBeforeTheDeviceRanIsNotThereYet) {
  auto owned = std::make_unique<test::DeferredDevice>();
  test::DeferredDevice& device = *owned;
  backends::ArtifactBackend backend(test::tiny_artifact_dir(), {}, backends::Residency::kOneNetwork, std::move(owned));
  const std::vector<std::int64_t> ids(2 * 77, 7);
  TensorDownload download = backend.submit_encode_text(ids, 2);
  EXPECT_GT(device.pending(), 0u);
  EXPECT_FALSE(download.ready());  // one operation run, more queued
  const HostTensor context = download.wait();
  EXPECT_EQ(device.pending(), 0u);
  EXPECT_TRUE(download.ready());
  EXPECT_EQ(context.data, test::tiny_artifact_backend().encode_text(ids, 2).data);
}

}  // namespace
}  // namespace websd
