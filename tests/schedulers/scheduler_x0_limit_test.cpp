// The limits diffusers may put on a predicted x0, by hand: clip_sample clamps, dynamic thresholding
// divides by a per-item quantile of |x0| (torch.quantile, linear interpolation) clamped to
// [1, sample_max_value]. And the wiring: DDIM clips x0 after deriving the noise from the unclipped one.
#include <gtest/gtest.h>

#include "pipeline/schedulers/sample_math.h"
#include "pipeline/schedulers/scheduler_factory.h"

namespace websd::schedulers {
namespace {

void expect_values(const HostTensor& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.data.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual.data[i], expected[i], 1e-6) << i;
}

TEST(X0Limit, ClipSampleClampsToTheRange) {
  X0Limit limit;
  limit.clip = true;
  limit.clip_range = 1.0f;
  expect_values(limit.apply(HostTensor({1, 4}, {0.5f, -3.0f, 1.5f, 0.25f})), {0.5f, -1.0f, 1.0f, 0.25f});
}

TEST(X0Limit, ThresholdingDividesEachItemByItsQuantile) {
  X0Limit limit;
  limit.thresholding = true;
  limit.clip = true;  // thresholding takes precedence
  limit.threshold_ratio = 0.5f;
  // Item 0: |x| sorted 0.5, 1.5, 3, 4; the median interpolates 1.5 and 3 to 2.25, clamped to max 2.
  // Item 1: |x| sorted 0.1, 0.2, 0.3, 0.4; median 0.25, clamped up to 1 (plain clipping).
  limit.threshold_max = 2.0f;
  const HostTensor x0({2, 4}, {0.5f, -3.0f, 1.5f, 4.0f, 0.1f, -0.4f, 0.3f, 0.2f});
  expect_values(limit.apply(x0), {0.25f, -1.0f, 0.75f, 1.0f, 0.1f, -0.4f, 0.3f, 0.2f});
  // With sample_max_value 3 the first item's threshold stays 2.25.
  limit.threshold_max = 3.0f;
  expect_values(limit.apply(x0), {0.5f / 2.25f, -1.0f, 1.5f / 2.25f, 1.0f, 0.1f, -0.4f, 0.3f, 0.2f});
}

TEST(X0Limit, DdimClipsThePredictedSampleButNotTheNoiseDerivedFromIt) {
  // alphas_cumprod 0.9, 0.72, 0.504, 0.3024; the step from t = 2 goes to alpha 0.9. The model predicts
  // x0 = 5 for x = 1: eps = (1 - sqrt(.504) * 5) / sqrt(.496) = -3.6202567 from the raw prediction, x0 is
  // clipped to 1, x_prev = sqrt(.9) * 1 + sqrt(.1) * eps = -0.1961424.
  const auto ddim = create_scheduler({{"trained_betas", {0.1, 0.2, 0.3, 0.4}},
                                      {"num_train_timesteps", 4},
                                      {"clip_sample", true},
                                      {"prediction_type", "sample"}},
                                     "ddim", "test");
  ddim->set_timesteps(2);
  EXPECT_NEAR(ddim->step(HostTensor({1}, {5.0f}), 2, HostTensor({1}, {1.0f})).data[0], -0.1961424, 1e-6);
}

}  // namespace
}  // namespace websd::schedulers
