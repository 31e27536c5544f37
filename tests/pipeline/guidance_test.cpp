// Classifier-free guidance: the arithmetic, the (uncond, cond) batch and the unguided half.
#include "pipeline/guidance.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "fake_backend.h"
#include "pipeline_test_support.h"

namespace websd {
namespace {

TEST(Guidance, CombinesUncondPlusScaleTimesDifference) {
  const HostTensor pair({2, 3}, {1.0f, -2.0f, 0.5f, 3.0f, -1.0f, 0.5f});
  const HostTensor guided = combine_guided(pair, 7.5);
  EXPECT_EQ(guided.shape, (Shape{1, 3}));
  EXPECT_FLOAT_EQ(guided.data[0], 1.0f + 7.5f * (3.0f - 1.0f));
  EXPECT_FLOAT_EQ(guided.data[1], -2.0f + 7.5f * (-1.0f + 2.0f));
  EXPECT_FLOAT_EQ(guided.data[2], 0.5f);  // equal halves stay put
}

TEST(Guidance, IsEnabledAboveOneOnly) {
  EXPECT_TRUE(guidance_enabled(1.0001));
  EXPECT_FALSE(guidance_enabled(1.0));
  EXPECT_FALSE(guidance_enabled(0.0));
}

TEST(Guidance, RunsTheUnetOnceOnTheDuplicatedSample) {
  test::FakeBackend backend;
  const HostTensor sample({1, 2, 1, 1}, {1.0f, 2.0f});
  const HostTensor context({2, 1, 1}, {0.25f, 1.0f});  // rows: uncond, cond
  const HostTensor prediction =
      backend.download(guided_prediction(backend, backend.upload(sample), 500.0, backend.upload(context), 3.0)).wait();
  ASSERT_EQ(backend.unet_calls.size(), 1u);
  EXPECT_EQ(backend.unet_calls[0].sample.shape, (Shape{2, 2, 1, 1}));
  EXPECT_EQ(backend.unet_calls[0].sample.data, (std::vector<float>{1.0f, 2.0f, 1.0f, 2.0f}));
  EXPECT_EQ(backend.unet_calls[0].timestep, 500.0);
  // fake prediction: 0.1 x + context row value; guided: uncond + 3 (cond - uncond)
  ASSERT_EQ(prediction.shape, (Shape{1, 2, 1, 1}));
  EXPECT_FLOAT_EQ(prediction.data[0], (0.1f + 0.25f) + 3.0f * (1.0f - 0.25f));
  EXPECT_FLOAT_EQ(prediction.data[1], (0.2f + 0.25f) + 3.0f * (1.0f - 0.25f));
}

TEST(Guidance, ScaleOneRunsTheConditionalRowAlone) {
  test::FakeBackend backend;
  const HostTensor sample({1, 1, 1, 1}, {2.0f});
  const HostTensor context({1, 1, 1}, {0.5f});
  const HostTensor prediction =
      backend.download(guided_prediction(backend, backend.upload(sample), 1.0, backend.upload(context), 1.0)).wait();
  ASSERT_EQ(backend.unet_calls.size(), 1u);
  EXPECT_EQ(backend.unet_calls[0].sample.shape, (Shape{1, 1, 1, 1}));
  EXPECT_FLOAT_EQ(prediction.data[0], 0.2f + 0.5f);
}

TEST(Guidance, RejectsAContextOfTheWrongBatch) {
  test::FakeBackend backend;
  const HostTensor sample({1, 1, 1, 1}, {2.0f});
  const HostTensor one_row({1, 1, 1}, {0.5f});
  EXPECT_THROW(guided_prediction(backend, backend.upload(sample), 1.0, backend.upload(one_row), 7.5), Error);
  EXPECT_TRUE(backend.unet_calls.empty());
}

TEST(Guidance, StackPairRejectsDifferentShapes) {
  EXPECT_THROW(stack_pair(HostTensor({1, 2}), HostTensor({1, 3})), Error);
  EXPECT_THROW(stack_pair(HostTensor({2, 2}), HostTensor({2, 2})), Error);
}

}  // namespace
}  // namespace websd
