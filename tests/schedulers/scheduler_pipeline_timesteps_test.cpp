// The tiny-sd15 pipeline rows ran with the configs in reference/scheduler-<sched>.json: websd builds
// the timesteps diffusers' pipeline used. cases.json records them as int(t), which truncates Euler's
// fractional float32 timesteps (856.2857 is listed as 856), so the comparison truncates too.
#include <gtest/gtest.h>

#include <cmath>

#include "io/json_file.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "support/fixtures.h"

namespace websd::schedulers {
namespace {

class PipelineTimesteps : public ::testing::TestWithParam<std::string> {};

TEST_P(PipelineTimesteps, MatchTheReferencePipeline) {
  const std::string sched = GetParam();
  const auto cases = json_read_file(test::fixture_path("tiny-sd15/reference/cases.json"));
  const std::string config_path = test::fixture_path("tiny-sd15/reference/scheduler-" + sched + ".json");
  const auto scheduler = create_scheduler_from_file(config_path);
  // The per-file config is the one cases.json records for the row.
  auto recorded = cases.at("pipe").at(sched).at("scheduler_config");
  EXPECT_EQ(json_read_file(config_path).dump(), recorded.dump());

  scheduler->set_timesteps(cases.at("steps").get<int>());
  const auto expected = cases.at("pipe").at(sched).at("timesteps").get<std::vector<double>>();
  ASSERT_EQ(scheduler->timesteps().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::trunc(scheduler->timesteps()[i]), expected[i]) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(TinySd15, PipelineTimesteps, ::testing::Values("pndm", "dpmpp_2m", "ddim", "euler"));

TEST(PipelineTimesteps, SeededEulerAncestralConfigLoads) {
  // seeded.json's euler_a row: linspace spacing, 8 steps from 999 down to 0 in float32.
  const auto scheduler = create_scheduler_from_file(test::fixture_path("tiny-sd15/reference/scheduler-euler_a.json"));
  EXPECT_TRUE(scheduler->needs_generator());
  scheduler->set_timesteps(8);
  ASSERT_EQ(scheduler->timesteps().size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_FLOAT_EQ(static_cast<float>(scheduler->timesteps()[static_cast<std::size_t>(i)]),
                    static_cast<float>((7 - i) * (999.0 / 7)))
        << i;
  }
  EXPECT_EQ(scheduler->init_noise_sigma(), scheduler->sigmas().front());
}

}  // namespace
}  // namespace websd::schedulers
