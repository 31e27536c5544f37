// Config resolution as diffusers' from_config, names, and every kind of bad input: unknown names and
// classes, malformed files, wrong types, unsupported values, impossible step counts, misuse of step.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "io/json_file.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "support/fixtures.h"

namespace websd::schedulers {
namespace {

// The message of the websd::Error that `action` throws (fails the test if it throws none).
template <typename Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a websd::Error";
  return "";
}

nlohmann::json sd15_config(const std::string& class_name) {
  return {{"_class_name", class_name}, {"beta_schedule", "scaled_linear"}, {"beta_start", 0.00085}, {"beta_end", 0.012},
          {"steps_offset", 1},         {"set_alpha_to_one", false},        {"clip_sample", false}};
}

TEST(SchedulerConfig, KnownKeysCarryOverUnknownKeysAreIgnoredDefaultsFillTheRest) {
  nlohmann::json config = sd15_config("EulerDiscreteScheduler");
  config["skip_prk_steps"] = true;  // a PNDM key: Euler does not know it
  const auto scheduler = create_scheduler(config, "", "test");
  EXPECT_EQ(scheduler->class_name(), "EulerDiscreteScheduler");
  EXPECT_EQ(scheduler->config().at("beta_schedule"), "scaled_linear");
  EXPECT_EQ(scheduler->config().at("steps_offset"), 1);
  EXPECT_FALSE(scheduler->config().contains("skip_prk_steps"));
  EXPECT_FALSE(scheduler->config().contains("_class_name"));
  EXPECT_EQ(scheduler->config().at("timestep_spacing"), "linspace");  // Euler's own default
  EXPECT_EQ(scheduler->config().at("prediction_type"), "epsilon");
}

TEST(SchedulerConfig, NameAloneGivesTheClassDefaults) {
  const auto ddim = create_scheduler_by_name("ddim");
  EXPECT_EQ(ddim->class_name(), "DDIMScheduler");
  EXPECT_EQ(ddim->config().at("beta_schedule"), "linear");
  EXPECT_EQ(ddim->config().at("clip_sample"), true);
  EXPECT_EQ(ddim->config().at("timestep_spacing"), "leading");
  EXPECT_EQ(create_scheduler_by_name("heun")->config().at("beta_start"), 0.00085);
  EXPECT_EQ(create_scheduler_by_name("lcm")->config().at("beta_schedule"), "scaled_linear");
}

TEST(SchedulerConfig, NamePicksTheClassOverTheFileAndFixesItsDefiningKeys) {
  const std::string path = test::fixture_path("tiny-sd15/reference/scheduler-dpmpp_2m.json");
  const auto karras = create_scheduler_from_file(path, "dpmpp_2m_karras");
  EXPECT_EQ(karras->class_name(), "DPMSolverMultistepScheduler");
  EXPECT_EQ(karras->config().at("use_karras_sigmas"), true);
  karras->set_timesteps(4);
  EXPECT_EQ(karras->timesteps(), (std::vector<double>{999, 687, 146, 0}));  // refs/schedulers dpmpp_2m_karras

  const auto euler = create_scheduler_from_file(path, "euler_karras");
  EXPECT_EQ(euler->class_name(), "EulerDiscreteScheduler");
  EXPECT_EQ(euler->config().at("use_karras_sigmas"), true);
  EXPECT_FALSE(euler->config().contains("algorithm_type"));
  EXPECT_EQ(create_scheduler_from_file(path, "pndm")->class_name(), "PNDMScheduler");
}

TEST(SchedulerConfig, ModelFolderLeadingSpacingCarriesOverToEuler) {
  // The tiny-sd15 model's own scheduler config says "leading": from_config carries it into Euler,
  // which then starts at sqrt(sigma_max^2 + 1) and steps by T // n from steps_offset.
  const auto euler =
      create_scheduler_from_file(test::fixture_path("tiny-sd15/model/scheduler/scheduler_config.json"), "euler");
  EXPECT_EQ(euler->config().at("timestep_spacing"), "leading");
  euler->set_timesteps(8);
  EXPECT_EQ(euler->timesteps(), (std::vector<double>{876, 751, 626, 501, 376, 251, 126, 1}));
  const double sigma_max = euler->sigmas().front();
  EXPECT_NEAR(euler->init_noise_sigma(), std::sqrt(sigma_max * sigma_max + 1), 1e-5);
}

TEST(SchedulerConfig, LegacyAliasesAreRewrittenAsDiffusersDoes) {
  nlohmann::json dpm = sd15_config("DPMSolverMultistepScheduler");
  dpm["algorithm_type"] = "deis";
  dpm["solver_type"] = "bh2";
  const auto solver = create_scheduler(dpm, "", "test");
  EXPECT_EQ(solver->config().at("algorithm_type"), "dpmsolver++");
  EXPECT_EQ(solver->config().at("solver_type"), "midpoint");
  nlohmann::json unipc = sd15_config("UniPCMultistepScheduler");
  unipc["solver_type"] = "midpoint";
  EXPECT_EQ(create_scheduler(unipc, "", "test")->config().at("solver_type"), "bh2");
}

TEST(SchedulerConfig, ZeroTerminalSnrRescalesAlphasCumprodByHand) {
  // alphas_cumprod 0.9, 0.72, 0.504, 0.3024 -> sqrt, shift so the last is 0, scale so the first stays:
  // 0.9, 0.5046885, 0.1449238, 0. Euler-type classes then set the last to 2^-24 so sigma_max is finite.
  const nlohmann::json config = {
      {"trained_betas", {0.1, 0.2, 0.3, 0.4}}, {"num_train_timesteps", 4}, {"rescale_betas_zero_snr", true}};
  const std::vector<double> expected = {0.9, 0.5046885, 0.1449238, 0.0};
  const auto ddim = create_scheduler(config, "ddim", "test");
  const auto euler = create_scheduler(config, "euler", "test");
  for (std::size_t t = 0; t < 3; ++t) {
    EXPECT_NEAR(ddim->alphas_cumprod()[t], expected[t], 1e-6) << t;
    EXPECT_NEAR(euler->alphas_cumprod()[t], expected[t], 1e-6) << t;
  }
  EXPECT_EQ(ddim->alphas_cumprod()[3], 0.0f);
  EXPECT_EQ(euler->alphas_cumprod()[3], 0x1p-24f);
  // PNDM has no such key: the flag is ignored there, as in diffusers.
  EXPECT_NEAR(create_scheduler(config, "pndm", "test")->alphas_cumprod()[3], 0.3024, 1e-6);
}

TEST(SchedulerConfig, UnknownNameListsTheValidNames) {
  const std::string message = error_of([] { create_scheduler_by_name("dpm_fast"); });
  EXPECT_NE(message.find("dpm_fast"), std::string::npos) << message;
  for (const auto& name : scheduler_names()) EXPECT_NE(message.find(name), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(SchedulerConfig, UnknownOrMissingClassNameIsReported) {
  const std::string unknown = error_of([] {
    create_scheduler({{"_class_name", "KDPM2DiscreteScheduler"}}, "", "cfg");
  });
  EXPECT_NE(unknown.find("KDPM2DiscreteScheduler"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("EulerDiscreteScheduler"), std::string::npos) << unknown;
  const std::string missing = error_of([] { create_scheduler({{"beta_end", 0.012}}, "", "cfg.json"); });
  EXPECT_NE(missing.find("_class_name"), std::string::npos) << missing;
  EXPECT_NE(missing.find("cfg.json"), std::string::npos) << missing;
}

TEST(SchedulerConfig, MalformedFilesAreReportedWithTheirPath) {
  const std::string dir = test::make_temp_dir("scheduler-config");
  const std::string broken = dir + "/broken.json";
  std::ofstream(broken) << R"({"_class_name": "DDIMScheduler", "beta_end": })";
  EXPECT_NE(error_of([&] { create_scheduler_from_file(broken); }).find(broken), std::string::npos);
  const std::string array = dir + "/array.json";
  std::ofstream(array) << "[1, 2]";
  EXPECT_NE(error_of([&] { create_scheduler_from_file(array, "ddim"); }).find("JSON object"), std::string::npos);
  EXPECT_NE(error_of([&] { create_scheduler_from_file(dir + "/missing.json"); }).find("missing.json"),
            std::string::npos);
}

TEST(SchedulerConfig, WrongTypesAndValuesNameTheKeyAndValue) {
  const auto expect_key_error = [](nlohmann::json config, const std::string& key, const std::string& value) {
    const std::string message = error_of([&] { create_scheduler(config, "", "cfg.json"); });
    EXPECT_NE(message.find("\"" + key + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(value), std::string::npos) << message;
    EXPECT_NE(message.find("cfg.json"), std::string::npos) << message;
  };
  nlohmann::json config = sd15_config("DDIMScheduler");
  config["num_train_timesteps"] = "many";
  expect_key_error(config, "num_train_timesteps", "\"many\"");
  config = sd15_config("DDIMScheduler");
  config["beta_schedule"] = "cubic";
  expect_key_error(config, "beta_schedule", "cubic");
  config = sd15_config("PNDMScheduler");
  config["trained_betas"] = {0.1, 0.2};
  expect_key_error(config, "trained_betas", "an array of 2 values");
  config = sd15_config("EulerDiscreteScheduler");
  config["timestep_spacing"] = "uniform";
  expect_key_error(config, "timestep_spacing", "uniform");
  config = sd15_config("EulerDiscreteScheduler");
  config["use_karras_sigmas"] = "yes";
  expect_key_error(config, "use_karras_sigmas", "\"yes\"");
}

TEST(SchedulerConfig, UnsupportedValuesAreRefusedNotIgnored) {
  const auto expect_refused = [](const std::string& class_name, const std::string& key, nlohmann::json value,
                                 const std::string& shown) {
    nlohmann::json config = sd15_config(class_name);
    config[key] = std::move(value);
    const std::string message = error_of([&] { create_scheduler(config, "", "cfg.json"); });
    EXPECT_NE(message.find("\"" + key + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(shown), std::string::npos) << message;
  };
  expect_refused("DPMSolverMultistepScheduler", "algorithm_type", "sde-dpmsolver++", "sde-dpmsolver++");
  expect_refused("DPMSolverMultistepScheduler", "use_lu_lambdas", true, "true");
  expect_refused("DPMSolverMultistepScheduler", "variance_type", "learned_range", "learned_range");
  expect_refused("EulerDiscreteScheduler", "use_exponential_sigmas", true, "true");
  expect_refused("EulerDiscreteScheduler", "interpolation_type", "log_linear", "log_linear");
  expect_refused("EulerAncestralDiscreteScheduler", "prediction_type", "sample", "sample");
  expect_refused("PNDMScheduler", "prediction_type", "flow_prediction", "flow_prediction");
  expect_refused("DDPMScheduler", "variance_type", "learned", "learned");
  expect_refused("UniPCMultistepScheduler", "solver_p", {{"_class_name", "DDIMScheduler"}}, "solver_p");
  expect_refused("DPMSolverMultistepScheduler", "solver_order", 4, "4");
}

TEST(SchedulerConfig, StepCountsOutsideTheTrainingScheduleAreRefused) {
  const auto scheduler = create_scheduler(sd15_config("DDIMScheduler"), "", "test");
  EXPECT_NE(error_of([&] { scheduler->set_timesteps(0); }).find("0 inference steps"), std::string::npos);
  EXPECT_NE(error_of([&] { scheduler->set_timesteps(1001); }).find("1001"), std::string::npos);
  scheduler->set_timesteps(1000);  // the whole training schedule is allowed
  EXPECT_EQ(scheduler->timesteps().size(), 1000u);
  const auto lcm = create_scheduler(sd15_config("LCMScheduler"), "", "test");
  EXPECT_NE(error_of([&] { lcm->set_timesteps(51); }).find("original_inference_steps"), std::string::npos);
}

TEST(SchedulerConfig, MisusedStepsAreReported) {
  const HostTensor sample({1, 4, 2, 2});
  const auto euler = create_scheduler(sd15_config("EulerDiscreteScheduler"), "", "test");
  EXPECT_NE(error_of([&] { euler->step(sample, 999, sample); }).find("set_timesteps"), std::string::npos);
  euler->set_timesteps(4);
  EXPECT_NE(error_of([&] { euler->step(sample, 998, sample); }).find("998"), std::string::npos);
  EXPECT_NE(error_of([&] { euler->step(HostTensor({1, 4, 2, 3}), 999, sample); }).find("shape"), std::string::npos);

  const auto ancestral = create_scheduler(sd15_config("EulerAncestralDiscreteScheduler"), "", "test");
  ancestral->set_timesteps(4);
  EXPECT_NE(error_of([&] { ancestral->step(sample, 999, sample); }).find("TorchGenerator"), std::string::npos);

  const auto ddim = create_scheduler(sd15_config("DDIMScheduler"), "", "test");
  ddim->set_timesteps(4);
  EXPECT_NE(error_of([&] { ddim->step(sample, 750.5, sample); }).find("750.5"), std::string::npos);
}

TEST(SchedulerConfig, ResetStartsANewRunWithTheSameSchedule) {
  const auto dpm = create_scheduler(sd15_config("DPMSolverMultistepScheduler"), "", "test");
  dpm->set_timesteps(5);
  HostTensor sample({1, 1, 2, 2}, {0.5f, -0.25f, 1.0f, 0.0f});
  const HostTensor output({1, 1, 2, 2}, {0.1f, 0.2f, -0.3f, 0.4f});
  const auto run = [&] {
    HostTensor x = sample;
    for (const double t : dpm->timesteps()) x = dpm->step(output, t, x);
    return x;
  };
  const HostTensor first = run();
  EXPECT_NE(error_of([&] { dpm->step(output, dpm->timesteps().back(), sample); }).find("reset"), std::string::npos);
  dpm->reset();
  EXPECT_EQ(run().data, first.data);
}

}  // namespace
}  // namespace websd::schedulers
