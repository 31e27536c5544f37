// `websd scheduler` as a user runs it: JSON on stdout for valid input, one error line and a non-zero
// exit for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/json_file.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST(SchedulerCommand, PrintsConfigTimestepsAndSigmasForAName) {
  const auto result = run_websd({"scheduler", "--name", "euler_karras", "--steps", "4"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = json_parse(result.out, "websd scheduler output");
  EXPECT_EQ(report.at("name"), "euler_karras");
  EXPECT_EQ(report.at("class_name"), "EulerDiscreteScheduler");
  EXPECT_EQ(report.at("config").at("use_karras_sigmas"), true);
  EXPECT_EQ(report.at("num_inference_steps"), 4);
  EXPECT_EQ(report.at("timesteps").size(), 4u);
  EXPECT_EQ(report.at("sigmas").size(), 5u);
  EXPECT_EQ(report.at("sigmas").back(), 0.0);
  EXPECT_FALSE(report.contains("img2img"));
}

TEST(SchedulerCommand, ConfigFileWithInfinityRoundTrips) {
  const std::string path = fixture_path("tiny-sd15/reference/scheduler-dpmpp_2m.json");
  const auto result = run_websd({"scheduler", "--config", path, "--steps", "8"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("\"lambda_min_clipped\": -Infinity"), std::string::npos) << result.out;
  const auto report = json_parse(result.out, "websd scheduler output");
  EXPECT_TRUE(std::isinf(report.at("config").at("lambda_min_clipped").get<double>()));
  const auto cases = json_read_file(fixture_path("tiny-sd15/reference/cases.json"));
  EXPECT_EQ(report.at("timesteps").get<std::vector<double>>(),
            cases.at("pipe").at("dpmpp_2m").at("timesteps").get<std::vector<double>>());
  EXPECT_TRUE(report.at("sigmas").is_array());
}

TEST(SchedulerCommand, StrengthPrintsTheImg2ImgSteps) {
  const std::string path = fixture_path("tiny-sd15/model/scheduler/scheduler_config.json");
  const auto result =
      run_websd({"scheduler", "--config", path, "--name", "ddim", "--steps", "10", "--strength", "0.6"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto report = json_parse(result.out, "websd scheduler output");
  EXPECT_EQ(report.at("class_name"), "DDIMScheduler");
  EXPECT_TRUE(report.at("sigmas").is_null());
  const auto& img2img = report.at("img2img");
  EXPECT_EQ(img2img.at("begin_index"), 4);
  EXPECT_EQ(img2img.at("sets_begin_index"), false);
  EXPECT_EQ(img2img.at("timesteps").get<std::vector<double>>(), (std::vector<double>{501, 401, 301, 201, 101, 1}));
}

TEST(SchedulerCommand, UnknownNameIsOneLineListingTheNames) {
  const auto result = run_websd({"scheduler", "--name", "dpm_fast", "--steps", "4"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_TRUE(result.out.empty());
  for (const char* name : {"pndm", "ddim", "dpmpp_2m_karras", "euler_a", "unipc", "lcm", "ddpm"}) {
    EXPECT_NE(result.err.find(name), std::string::npos) << result.err;
  }
}

TEST(SchedulerCommand, MissingStepsIsOneLine) {
  const auto result = run_websd({"scheduler", "--name", "euler"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("--steps"), std::string::npos) << result.err;
}

TEST(SchedulerCommand, BadInputIsOneLineEach) {
  const std::vector<std::vector<std::string>> cases = {
      {"scheduler", "--steps", "4"},                                        // neither --name nor --config
      {"scheduler", "--name", "euler", "--steps", "0"},                     // no steps
      {"scheduler", "--name", "euler", "--steps", "5000"},                  // more than num_train_timesteps
      {"scheduler", "--name", "euler", "--steps", "4", "--strength", "2"},  // strength outside [0, 1]
      {"scheduler", "--config", "/nonexistent/scheduler_config.json", "--steps", "4"}};
  for (const auto& args : cases) {
    const auto result = run_websd(args);
    EXPECT_NE(result.exit_code, 0) << args[2];
    EXPECT_EQ(line_count(result.err), 1) << result.err;
  }
}

}  // namespace
}  // namespace websd::test
