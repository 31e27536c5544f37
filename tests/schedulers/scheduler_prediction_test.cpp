// Prediction types checked by hand. A single DDIM v-prediction step with numbers worked out on paper,
// then an exact "oracle" model for every deterministic scheduler: a model that predicts the true
// noise (epsilon), the true clean sample (sample) or the true velocity v = alpha * noise - sigma * x0
// (v_prediction) makes each update exact, so after every step the sample must sit on the forward
// process x = alpha * x0 + sigma * noise of the next noise level, and the run must end on x0.
#include <gtest/gtest.h>

#include <cmath>

#include "pipeline/schedulers/scheduler_factory.h"

namespace websd::schedulers {
namespace {

TEST(PredictionTypes, DdimVPredictionStepByHand) {
  // Four training steps with betas 0.1 .. 0.4: alphas_cumprod = 0.9, 0.72, 0.504, 0.3024. Two inference
  // steps ("leading", no offset) visit t = 2 then t = 0, so the first steps from alpha 0.504 to 0.9.
  const nlohmann::json config = {{"trained_betas", {0.1, 0.2, 0.3, 0.4}},
                                 {"num_train_timesteps", 4},
                                 {"clip_sample", false},
                                 {"set_alpha_to_one", true},
                                 {"prediction_type", "v_prediction"}};
  const auto ddim = create_scheduler(config, "ddim", "test");
  ddim->set_timesteps(2);
  ASSERT_EQ(ddim->timesteps(), (std::vector<double>{2, 0}));
  // x = 1, v = 0.5: x0 = sqrt(.504) * 1 - sqrt(.496) * .5 = 0.3577932; eps = sqrt(.504) * .5 + sqrt(.496) * 1
  // = 1.0592375; x_prev = sqrt(.9) * x0 + sqrt(.1) * eps = 0.6743928.
  const HostTensor next = ddim->step(HostTensor({1}, {0.5f}), 2, HostTensor({1}, {1.0f}));
  EXPECT_NEAR(next.data[0], 0.6743928, 1e-6);

  const auto as_sample = create_scheduler({{"trained_betas", {0.1, 0.2, 0.3, 0.4}},
                                           {"num_train_timesteps", 4},
                                           {"clip_sample", false},
                                           {"prediction_type", "sample"}},
                                          "ddim", "test");
  as_sample->set_timesteps(2);
  // x0 = 0.25: eps = (1 - sqrt(.504) * .25) / sqrt(.496) = 1.1678915; x_prev = sqrt(.9) * .25 + sqrt(.1) * eps.
  EXPECT_NEAR(as_sample->step(HostTensor({1}, {0.25f}), 2, HostTensor({1}, {1.0f})).data[0], 0.6064921, 1e-6);
}

struct OracleCase {
  std::string name;
  std::string prediction;
};

class OracleModel : public ::testing::TestWithParam<OracleCase> {};

// Forward-process coefficients (alpha, sigma) of the sample at schedule position `index`, and of the
// final sample after the last step.
std::pair<double, double> level_at(const Scheduler& scheduler, std::size_t index) {
  const bool sigma_space = !scheduler.sigmas().empty();
  if (sigma_space) {
    const double sigma = index < scheduler.timesteps().size() ? scheduler.sigmas()[index] : scheduler.sigmas().back();
    const bool variance_preserving =
        scheduler.class_name() == "DPMSolverMultistepScheduler" || scheduler.class_name() == "UniPCMultistepScheduler";
    const double alpha = variance_preserving ? 1 / std::sqrt(sigma * sigma + 1) : 1.0;
    return {alpha, alpha * sigma};
  }
  // DDIM and PNDM: alphas_cumprod at the timestep, alphas_cumprod[0] after the last step
  // (set_alpha_to_one false).
  const double alpha_cumprod = index < scheduler.timesteps().size()
                                   ? scheduler.alphas_cumprod()[static_cast<std::size_t>(scheduler.timesteps()[index])]
                                   : scheduler.alphas_cumprod().front();
  return {std::sqrt(alpha_cumprod), std::sqrt(1 - alpha_cumprod)};
}

TEST_P(OracleModel, EveryStepLandsOnTheForwardProcess) {
  const OracleCase& param = GetParam();
  const nlohmann::json config = {{"beta_schedule", "scaled_linear"},
                                 {"beta_start", 0.00085},
                                 {"beta_end", 0.012},
                                 {"steps_offset", 1},
                                 {"set_alpha_to_one", false},
                                 {"clip_sample", false},
                                 {"skip_prk_steps", true},
                                 {"prediction_type", param.prediction}};
  const auto scheduler = create_scheduler(config, param.name, "test");
  scheduler->set_timesteps(12);

  HostTensor x0({1, 4, 4, 4});
  HostTensor noise({1, 4, 4, 4});
  for (std::size_t i = 0; i < x0.data.size(); ++i) {
    x0.data[i] = 0.8f * std::sin(0.37f * static_cast<float>(i));
    noise.data[i] = std::cos(1.3f * static_cast<float>(i));
  }
  const auto forward = [&](std::pair<double, double> level) {
    HostTensor x(x0.shape);
    for (std::size_t i = 0; i < x.data.size(); ++i) {
      x.data[i] = static_cast<float>(level.first * x0.data[i] + level.second * noise.data[i]);
    }
    return x;
  };
  const auto oracle = [&](std::pair<double, double> level) {
    // The model sees alpha * x0 + sigma * noise (sigma-space classes scale their input to it).
    const auto [alpha, sigma] = level;
    const double variance = alpha * alpha + sigma * sigma;
    const double a = alpha / std::sqrt(variance);
    const double s = sigma / std::sqrt(variance);
    if (param.prediction == "epsilon") return noise;
    if (param.prediction == "sample") return x0;
    HostTensor v(x0.shape);
    for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = static_cast<float>(a * noise.data[i] - s * x0.data[i]);
    return v;
  };
  const auto relative_error = [](const HostTensor& actual, const HostTensor& expected) {
    double diff = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < expected.data.size(); ++i) {
      diff += std::pow(static_cast<double>(actual.data[i]) - expected.data[i], 2);
      norm += std::pow(static_cast<double>(expected.data[i]), 2);
    }
    return std::sqrt(diff / norm);
  };

  // diffusers' PLMS combines the raw outputs of several noise levels before converting them, which is
  // exact for noise predictions but not for velocities (they depend on the level): with v_prediction
  // only PNDM's first step, which uses one output, is exact.
  const auto& timesteps = scheduler->timesteps();
  const std::size_t exact_steps = param.name == "pndm" && param.prediction == "v_prediction" ? 1 : timesteps.size();
  HostTensor x = forward(level_at(*scheduler, 0));
  for (std::size_t i = 0; i < exact_steps; ++i) {
    scheduler->scale_model_input(x, timesteps[i]);
    x = scheduler->step(oracle(level_at(*scheduler, i)), timesteps[i], x);
    EXPECT_LE(relative_error(x, forward(level_at(*scheduler, i + 1))), 2e-5) << "after step " << i;
  }
}

std::vector<OracleCase> oracle_cases() {
  std::vector<OracleCase> cases;
  for (const std::string name :
       {"pndm", "ddim", "dpmpp_2m", "dpmpp_2m_karras", "euler", "euler_karras", "lms", "heun", "unipc"}) {
    for (const std::string prediction : {"epsilon", "v_prediction", "sample"}) {
      if (name == "pndm" && prediction == "sample") continue;  // diffusers' PNDM has no "sample"
      cases.push_back({name, prediction});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(DeterministicSchedulers, OracleModel, ::testing::ValuesIn(oracle_cases()),
                         [](const ::testing::TestParamInfo<OracleCase>& info) {
                           return info.param.name + "_" + info.param.prediction;
                         });

}  // namespace
}  // namespace websd::schedulers
