// Value forms (src/pipeline/schedulers/CONFIG_FIELDS.md): for every class, each form that diffusers
// accepts for a key (1000.0 for 1000, null and 0 for false, 1 for true, null where diffusers reads the
// key as unset or never reads it) gives the same timesteps, sigmas and steps as the canonical form;
// each refused form is one websd::Error that names the key and the value. Also "_use_default_values"
// and the class-specific beta schedules (DDPM's sigmoid and laplace, Heun's exp) against diffusers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "io/json_file.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "support/error_text.h"

namespace websd::schedulers {
namespace {

using test::error_of;

// What a config produces: the schedule, and a short run of steps with a fixed linear "model" (the
// stochastic classes draw from a generator seeded 0), so flags that only act in step count too.
struct Outcome {
  std::vector<double> timesteps;
  std::vector<double> sigmas;
  double init_noise_sigma = 0;
  std::vector<float> alphas_cumprod;
  std::vector<float> sample;
};

nlohmann::json with_class(nlohmann::json config, const std::string& class_name) {
  config["_class_name"] = class_name;
  return config;
}

Outcome run(const nlohmann::json& config, int steps = 6) {
  const auto scheduler = create_scheduler(config, "", "forms.json");
  scheduler->set_timesteps(steps);
  Outcome outcome{
      scheduler->timesteps(), scheduler->sigmas(), scheduler->init_noise_sigma(), scheduler->alphas_cumprod(), {}};
  HostTensor x({1, 1, 4, 4});
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    x.data[i] = static_cast<float>((-1.0 + 2.0 * static_cast<double>(i) / 15.0) * outcome.init_noise_sigma);
  }
  TorchGenerator generator(0);
  for (const double t : scheduler->timesteps()) {
    HostTensor output = scheduler->scale_model_input(x, t);
    for (auto& value : output.data) value = 0.1f * value + 0.05f;
    x = scheduler->needs_generator() ? scheduler->step(output, t, x, generator) : scheduler->step(output, t, x);
  }
  outcome.sample = x.data;
  return outcome;
}

// Bit for bit, so that NaN (a degenerate flag combination such as zero terminal SNR with LCM's
// boundary conditions) compares equal to the NaN that the canonical form gives.
template <typename T>
std::vector<std::uint64_t> bits(const std::vector<T>& values) {
  std::vector<std::uint64_t> result;
  for (const T value : values) {
    std::uint64_t word = 0;
    std::memcpy(&word, &value, sizeof(T));
    result.push_back(word);
  }
  return result;
}

void expect_same(const Outcome& actual, const Outcome& expected) {
  EXPECT_EQ(bits(actual.timesteps), bits(expected.timesteps));
  EXPECT_EQ(bits(actual.sigmas), bits(expected.sigmas));
  EXPECT_EQ(actual.init_noise_sigma, expected.init_noise_sigma);
  EXPECT_EQ(bits(actual.alphas_cumprod), bits(expected.alphas_cumprod));
  EXPECT_EQ(bits(actual.sample), bits(expected.sample));
}

// One key's canonical value and the other forms that must act like it, in a context (other keys)
// that makes the key matter. A case applies to the classes that have the key (or to `only_class`).
struct FormCase {
  FormCase(std::string key_, nlohmann::json canonical_, std::vector<nlohmann::json> forms_,
           nlohmann::json context_ = nlohmann::json::object(), std::string only_class_ = "")
      : key(std::move(key_)),
        canonical(std::move(canonical_)),
        forms(std::move(forms_)),
        context(std::move(context_)),
        only_class(std::move(only_class_)) {}

  std::string key;
  nlohmann::json canonical;
  std::vector<nlohmann::json> forms;
  nlohmann::json context;
  std::string only_class;
};

std::vector<FormCase> form_cases() {
  const double infinity = std::numeric_limits<double>::infinity();
  return {
      // Integers written as whole floats.
      {"num_train_timesteps", 1000, {1000.0, 1e3}},
      {"num_train_timesteps", 500, {500.0}, {{"beta_schedule", "squaredcos_cap_v2"}}},
      {"steps_offset", 1, {1.0}, {{"timestep_spacing", "leading"}}},
      {"solver_order", 3, {3.0}},
      {"solver_order", 1, {1.0}},
      {"original_inference_steps", 40, {40.0}},
      {"disable_corrector", {1, 3}, {{1.0, 3.0}}},
      // Numbers written as integers.
      {"lambda_min_clipped", -5.1, {-5.1}, {{"beta_schedule", "squaredcos_cap_v2"}}},
      {"lambda_min_clipped", -5.0, {-5}, {{"beta_schedule", "squaredcos_cap_v2"}}},
      {"lambda_min_clipped", -infinity, {-infinity}},
      {"clip_sample_range", 2.0, {2}, {{"clip_sample", true}}},
      {"timestep_scaling", 10.0, {10}},
      // null read as unset: the class default where diffusers falls back to it...
      {"trained_betas", nullptr, {nullptr}},
      {"variance_type", "fixed_small", {nullptr}},
      {"timestep_type", "discrete", {nullptr}, {{"prediction_type", "v_prediction"}}},
      {"sigma_min", nullptr, {nullptr}, {{"use_karras_sigmas", true}}},
      {"sample_max_value", 1e30, {nullptr}, {{"thresholding", true}}},
      // ... and keys diffusers does not read in that context.
      {"steps_offset", 0, {nullptr, 3}, {{"timestep_spacing", "linspace"}}},
      {"clip_sample_range", 1.0, {nullptr, -1}, {{"clip_sample", false}}},
      {"dynamic_thresholding_ratio", 0.995, {nullptr, 7}, {{"thresholding", false}}},
      {"sample_max_value", 1.0, {nullptr, 0.5}, {{"thresholding", false}}},
      {"sigma_min", nullptr, {0.5, 0}, {{"use_karras_sigmas", false}}},
      {"sigma_max", nullptr, {20.0, 0}, {{"use_karras_sigmas", false}}},
      {"flow_shift", 1.0, {nullptr, 3.0}},
      {"time_shift_type", "exponential", {nullptr, "linear"}},
      {"variance_type", nullptr, {"fixed_small", "fixed_large"}, {}, "DPMSolverMultistepScheduler"},
      {"use_dynamic_shifting", false, {true}, {}, "DPMSolverMultistepScheduler"},
      {"timestep_spacing", "leading", {nullptr, "trailing", "any"}, {}, "LCMScheduler"},
      // Legacy names diffusers still maps.
      {"prediction_type", "sample", {"original_sample"}, {}, "EulerDiscreteScheduler"},
      {"algorithm_type", "dpmsolver++", {"deis"}, {}, "DPMSolverMultistepScheduler"},
      {"solver_type", "midpoint", {"logrho", "bh1", "bh2"}, {}, "DPMSolverMultistepScheduler"},
      {"solver_type", "bh2", {"midpoint", "heun", "logrho"}, {}, "UniPCMultistepScheduler"},
      {"steps_offset", 0, {nullptr, 5}, {{"timestep_spacing", "leading"}}, "LCMScheduler"},
  };
}

// The flags of a class: keys whose default is a boolean. null and 0 act as false, 1 as true (Python
// reads a flag by its truth value), in a context where the flag matters.
std::vector<FormCase> flag_cases(const nlohmann::json& defaults) {
  const nlohmann::json context = {
      {"clip_sample_range", 0.5}, {"sample_max_value", 1.5}, {"timestep_spacing", "leading"}};
  std::vector<FormCase> cases;
  for (const auto& [key, value] : defaults.items()) {
    if (!value.is_boolean()) continue;
    cases.push_back({key, false, {nullptr, 0}, context});
    cases.push_back({key, true, {1}, context});
  }
  return cases;
}

class SchedulerConfigForms : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerConfigForms, AcceptedFormsGiveTheCanonicalScheduleAndSteps) {
  const std::string class_name = GetParam();
  const nlohmann::json defaults = create_scheduler(with_class({}, class_name), "", "defaults")->config();
  std::vector<FormCase> cases = form_cases();
  const std::vector<FormCase> flags = flag_cases(defaults);
  cases.insert(cases.end(), flags.begin(), flags.end());
  int compared = 0;
  for (const FormCase& form : cases) {
    if (!form.only_class.empty() ? form.only_class != class_name : !defaults.contains(form.key)) continue;
    nlohmann::json canonical = with_class(form.context, class_name);  // keys the class lacks are ignored
    canonical[form.key] = form.canonical;
    // A flag websd refuses when set (use_lu_lambdas, ...) has no canonical run to compare with.
    if (form.canonical == true && error_of([&] { run(canonical); }) != "(no error)") continue;
    const Outcome expected = run(canonical);
    for (const auto& value : form.forms) {
      SCOPED_TRACE(class_name + " " + form.key + " = " + value.dump() + " (as " + form.canonical.dump() + ")");
      nlohmann::json variant = canonical;
      variant[form.key] = value;
      expect_same(run(variant), expected);
      ++compared;
    }
  }
  EXPECT_GE(compared, 10) << class_name;
}

INSTANTIATE_TEST_SUITE_P(EveryClass, SchedulerConfigForms, ::testing::ValuesIn(scheduler_class_names()),
                         [](const auto& info) { return info.param; });

TEST(SchedulerConfigForms, ResolvedConfigHoldsTheCanonicalForms) {
  // `websd scheduler` prints the resolved config and the PNG metadata names the sampler from it.
  const auto dpm = create_scheduler({{"_class_name", "DPMSolverMultistepScheduler"},
                                     {"num_train_timesteps", 1000.0},
                                     {"solver_order", 2.0},
                                     {"use_karras_sigmas", 1},
                                     {"lower_order_final", nullptr},
                                     {"thresholding", 0}},
                                    "", "forms.json");
  EXPECT_TRUE(dpm->config().at("num_train_timesteps").is_number_integer());
  EXPECT_EQ(dpm->config().at("num_train_timesteps"), 1000);
  EXPECT_TRUE(dpm->config().at("solver_order").is_number_integer());
  EXPECT_EQ(dpm->config().at("use_karras_sigmas"), true);
  EXPECT_EQ(dpm->config().at("lower_order_final"), false);
  EXPECT_EQ(dpm->config().at("thresholding"), false);
}

TEST(SchedulerConfigForms, JsonTextWithPythonLiteralsResolves) {
  // json.dump writes the DPM default lambda_min_clipped as -Infinity; Python reads 1000.0 back as a float.
  const auto config = json_parse(R"({"_class_name": "DPMSolverMultistepScheduler", "lambda_min_clipped": -Infinity,
      "num_train_timesteps": 1000.0, "steps_offset": 1.0, "solver_order": 2.0, "trained_betas": null,
      "variance_type": null, "thresholding": null, "use_karras_sigmas": 0})",
                                 "forms.json");
  expect_same(run(config), run({{"_class_name", "DPMSolverMultistepScheduler"}, {"steps_offset", 1}}));
}

TEST(SchedulerConfigForms, KeysListedInUseDefaultValuesTakeTheClassDefault) {
  // register_to_config lists the keys a config was made without; from_config drops them, so a DDIM
  // config's default "leading" spacing does not carry over to Euler, whose default is "linspace".
  const nlohmann::json ddim = {{"_class_name", "DDIMScheduler"},
                               {"timestep_spacing", "leading"},
                               {"steps_offset", 1},
                               {"beta_schedule", "scaled_linear"},
                               {"_use_default_values", {"timestep_spacing", "clip_sample"}}};
  const auto euler = create_scheduler(ddim, "euler", "forms.json");
  EXPECT_EQ(euler->config().at("timestep_spacing"), "linspace");
  EXPECT_EQ(euler->config().at("beta_schedule"), "scaled_linear");
  EXPECT_EQ(create_scheduler(ddim, "", "forms.json")->config().at("timestep_spacing"), "leading");  // DDIM's own

  // A name's defining keys act as from_config's keyword arguments, which the list does not reset.
  nlohmann::json karras = ddim;
  karras["_use_default_values"] = {"use_karras_sigmas", "timestep_spacing"};
  karras["use_karras_sigmas"] = false;
  EXPECT_EQ(create_scheduler(karras, "euler_karras", "forms.json")->config().at("use_karras_sigmas"), true);

  const std::string message = error_of([&] {
    nlohmann::json bad = ddim;
    bad["_use_default_values"] = "timestep_spacing";
    create_scheduler(bad, "", "forms.json");
  });
  EXPECT_NE(message.find("\"_use_default_values\" = \"timestep_spacing\""), std::string::npos) << message;
}

TEST(SchedulerConfigForms, ClassSpecificBetaSchedulesMatchDiffusers) {
  // diffusers' alphas_cumprod at t = 0, 1, 500, 998, 999 for the schedules only DDPM and Heun have.
  const auto expect_alphas = [](const nlohmann::json& config, const std::vector<double>& expected) {
    const auto scheduler = create_scheduler(config, "", "forms.json");
    const std::vector<int> at = {0, 1, 500, 998, 999};
    for (std::size_t i = 0; i < at.size(); ++i) {
      EXPECT_NEAR(scheduler->alphas_cumprod()[static_cast<std::size_t>(at[i])], expected[i], expected[i] * 1e-5)
          << config.dump() << " t=" << at[i];
    }
  };
  expect_alphas(
      {{"_class_name", "DDPMScheduler"}, {"beta_schedule", "sigmoid"}},
      {0.9998508095741272, 0.9997010231018066, 0.29888758063316345, 4.048962364322506e-05, 3.9681821363046765e-05});
  expect_alphas({{"_class_name", "DDPMScheduler"}, {"beta_schedule", "laplace"}},
                {0.9788462519645691, 0.9702835083007812, 0.7072834372520447, 0.20702660083770752, 0.03162277489900589});
  expect_alphas(
      {{"_class_name", "HeunDiscreteScheduler"}, {"beta_schedule", "exp"}},
      {0.9880717396736145, 0.9762857556343079, 0.0024492181837558746, 6.2185554270399734e-06, 6.144378858152777e-06});
  const auto heun = create_scheduler({{"_class_name", "HeunDiscreteScheduler"}, {"beta_schedule", "exp"}}, "", "x");
  heun->set_timesteps(4);
  EXPECT_EQ(heun->timesteps(), (std::vector<double>{999, 666, 666, 333, 333, 0, 0}));
  const std::vector<double> sigmas = {403.4220886230469, 54.697818756103516,  54.697818756103516,  7.350931167602539,
                                      7.350931167602539, 0.10987384617328644, 0.10987384617328644, 0.0};
  ASSERT_EQ(heun->sigmas().size(), sigmas.size());
  for (std::size_t i = 0; i < sigmas.size(); ++i) EXPECT_NEAR(heun->sigmas()[i], sigmas[i], sigmas[i] * 1e-5) << i;
}

// A refused form: the one error names the origin, the key in quotes and the value as written.
struct RefusedCase {
  RefusedCase(std::string class_name_, std::string key_, nlohmann::json value_, std::string shown_,
              nlohmann::json context_ = nlohmann::json::object(), std::string except_class_ = "")
      : class_name(std::move(class_name_)),
        key(std::move(key_)),
        value(std::move(value_)),
        shown(std::move(shown_)),
        context(std::move(context_)),
        except_class(std::move(except_class_)) {}

  std::string class_name;  // empty: every class that has the key
  std::string key;
  nlohmann::json value;
  std::string shown;
  nlohmann::json context;
  std::string except_class;  // a class where diffusers never reads the key, so any value passes
};

std::vector<RefusedCase> refused_cases() {
  return {
      // Fractional or wrongly typed integers; strings and numbers other than 0/1 as flags.
      {"", "num_train_timesteps", 1000.5, "1000.5"},
      {"", "num_train_timesteps", "1000", "\"1000\""},
      {"", "num_train_timesteps", true, "true"},
      {"", "num_train_timesteps", nullptr, "null"},
      {"", "steps_offset", 1.5, "1.5"},
      {"", "steps_offset", true, "true"},
      {"", "steps_offset", nullptr, "null", {{"timestep_spacing", "leading"}}, "LCMScheduler"},
      {"", "solver_order", 2.5, "2.5"},
      {"", "solver_order", nullptr, "null"},
      {"", "solver_order", 4, "4"},
      {"", "original_inference_steps", 50.5, "50.5"},
      {"", "original_inference_steps", nullptr, "null"},
      {"", "disable_corrector", {0.5}, "an array of 1 values"},
      {"", "disable_corrector", nullptr, "null"},
      {"", "rescale_betas_zero_snr", "true", "\"true\""},
      {"", "clip_sample", "false", "\"false\""},
      {"", "use_karras_sigmas", 2, "2"},
      // null where diffusers fails on it.
      {"", "timestep_spacing", nullptr, "null", {}, "LCMScheduler"},
      {"", "prediction_type", nullptr, "null"},
      {"", "beta_schedule", nullptr, "null"},
      {"", "beta_start", nullptr, "null"},
      {"", "final_sigmas_type", nullptr, "null"},
      {"", "interpolation_type", nullptr, "null"},
      {"", "lambda_min_clipped", nullptr, "null"},
      {"", "algorithm_type", nullptr, "null"},
      {"", "solver_type", nullptr, "null"},
      {"", "timestep_scaling", nullptr, "null"},
      {"", "dynamic_thresholding_ratio", nullptr, "null", {{"thresholding", true}}},
      {"", "clip_sample_range", nullptr, "null", {{"clip_sample", true}, {"thresholding", false}}},
      {"", "sigma_min", 0, "0", {{"use_karras_sigmas", true}}},
      {"", "sigma_max", true, "true"},
      {"", "trained_betas", {0.1, 0.2}, "an array of 2 values"},
      {"", "trained_betas", nlohmann::json::array(), "an array of 0 values"},
      // Values that select what websd does not implement.
      {"DPMSolverMultistepScheduler", "algorithm_type", "dpmsolver", "dpmsolver", {{"final_sigmas_type", "sigma_min"}}},
      {"DPMSolverMultistepScheduler", "algorithm_type", "sde-dpmsolver++", "sde-dpmsolver++"},
      {"DPMSolverMultistepScheduler", "variance_type", "learned_range", "learned_range"},
      {"DPMSolverMultistepScheduler", "use_lu_lambdas", 1, "true"},
      {"UniPCMultistepScheduler", "use_dynamic_shifting", true, "true"},
      {"UniPCMultistepScheduler", "prediction_type", "flow_prediction", "flow_prediction"},
      {"DDPMScheduler", "variance_type", "fixed_large_log", "fixed_large_log"},
      {"DDIMScheduler", "beta_schedule", "sigmoid", "sigmoid"},
      {"DDPMScheduler", "beta_schedule", "exp", "exp"},
      {"EulerDiscreteScheduler", "use_beta_sigmas", true, "true"},
  };
}

TEST(SchedulerConfigForms, RefusedFormsAreOneErrorNamingTheKeyAndValue) {
  int refused = 0;
  for (const RefusedCase& refusal : refused_cases()) {
    for (const auto& class_name : scheduler_class_names()) {
      if (!refusal.class_name.empty() && refusal.class_name != class_name) continue;
      if (refusal.except_class == class_name) continue;
      const nlohmann::json defaults = create_scheduler(with_class({}, class_name), "", "defaults")->config();
      if (!defaults.contains(refusal.key)) continue;
      nlohmann::json config = with_class(refusal.context, class_name);
      config[refusal.key] = refusal.value;
      SCOPED_TRACE(class_name + " " + refusal.key + " = " + refusal.value.dump());
      const std::string message = error_of([&] { run(config); });
      EXPECT_NE(message.find("forms.json: " + class_name + " key \"" + refusal.key + "\" = "), std::string::npos)
          << message;
      EXPECT_NE(message.find(refusal.shown), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      ++refused;
    }
  }
  EXPECT_GE(refused, 150);
}

TEST(SchedulerConfigForms, UnsupportedValuesSayWhatWebsdSupports) {
  const auto message_for = [](const nlohmann::json& config) { return error_of([&] { run(config); }); };
  const std::string algorithm =
      message_for({{"_class_name", "DPMSolverMultistepScheduler"}, {"algorithm_type", "sde-dpmsolver++"}});
  EXPECT_NE(algorithm.find("not supported by websd (use one of: dpmsolver++)"), std::string::npos) << algorithm;
  const std::string schedule = message_for({{"_class_name", "DDIMScheduler"}, {"beta_schedule", "sigmoid"}});
  EXPECT_NE(schedule.find("linear, scaled_linear, squaredcos_cap_v2)"), std::string::npos) << schedule;
  const std::string whole = message_for({{"_class_name", "DDIMScheduler"}, {"num_train_timesteps", 1000.5}});
  EXPECT_NE(whole.find("expected an integer (a whole number such as 1000 or 1000.0)"), std::string::npos) << whole;
  const std::string flag = message_for({{"_class_name", "DDIMScheduler"}, {"clip_sample", "false"}});
  EXPECT_NE(flag.find("expected true or false (or null, 0, 1)"), std::string::npos) << flag;
}

}  // namespace
}  // namespace websd::schedulers
