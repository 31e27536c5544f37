// Parity with diffusers: every scheduler, for 4, 20 and 50 steps, reproduces the timesteps, sigmas,
// init_noise_sigma and the whole trajectory of the fixture loop (fixtures README, refs/schedulers.*):
//   set_timesteps(n); x = x0 * init_noise_sigma
//   for t in timesteps: xin = scale_model_input(x, t); eps = 0.5 tanh(xin) + 0.01 (t / 1000); x = step(eps, t, x)
// with euler_a, ddpm and lcm drawing their noise from a torch CPU generator seeded 7.
// Error measure: relative L2 of each trajectory step, ||x - ref|| / ||ref||, below 1e-5; timesteps
// and sigmas element-wise relative, below 1e-5. The worst per scheduler is printed at the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>

#include "io/json_file.h"
#include "io/safetensors_reader.h"
#include "pipeline/schedulers/scheduler_factory.h"
#include "support/fixtures.h"
#include "support/tensor_compare.h"

namespace websd::schedulers {
namespace {

using test::relative_l2;

constexpr double kTolerance = 1e-5;

struct ParityCase {
  std::string name;
  int steps;
  std::string key() const { return name + ".epsilon." + std::to_string(steps); }
};

std::vector<ParityCase> parity_cases() {
  std::vector<ParityCase> cases;
  for (const auto& name : scheduler_names()) {
    for (const int steps : {4, 20, 50}) cases.push_back({name, steps});
  }
  return cases;
}

// Float64 tensors read without the float32 round trip of read_f32.
std::vector<double> read_f64(const SafetensorsFile& file, const std::string& name) {
  const auto& entry = file.at(name);
  EXPECT_EQ(entry.dtype, DType::kF64) << name;
  const auto bytes = file.bytes(entry);
  std::vector<double> values(bytes.size() / sizeof(double));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(double));
  return values;
}

double worst_elementwise(const std::vector<double>& actual, const std::vector<double>& expected) {
  double worst = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::fabs(actual[i] - expected[i]) / std::max(std::fabs(expected[i]), 1.0));
  }
  return worst;
}

class SchedulerParity : public ::testing::TestWithParam<ParityCase> {
 public:
  static void TearDownTestSuite() {
    std::cout << "[parity] worst relative error per scheduler (trajectory rel. L2 | timesteps/sigmas):\n";
    for (const auto& [name, errors] : worst_) {
      std::cout << "[parity]   " << name << ": " << errors.first << " | " << errors.second << "\n";
    }
  }

 protected:
  static inline std::map<std::string, std::pair<double, double>> worst_;
};

TEST_P(SchedulerParity, MatchesDiffusersTrajectory) {
  const ParityCase& param = GetParam();
  const auto references = json_read_file(test::fixture_path("refs/schedulers.json"));
  const SafetensorsFile tensors(test::fixture_path("refs/schedulers.safetensors"));
  const auto& reference = references.at(param.key());
  const std::string prefix = "sched." + param.key() + ".";

  auto scheduler = create_scheduler(reference.at("config"), "", param.key());
  scheduler->set_timesteps(param.steps);

  const auto expected_timesteps = read_f64(tensors, prefix + "timesteps");
  ASSERT_EQ(scheduler->timesteps().size(), expected_timesteps.size());
  double schedule_error = worst_elementwise(scheduler->timesteps(), expected_timesteps);
  if (tensors.find(prefix + "sigmas") != nullptr) {
    const auto expected_sigmas = read_f64(tensors, prefix + "sigmas");
    ASSERT_EQ(scheduler->sigmas().size(), expected_sigmas.size());
    schedule_error = std::max(schedule_error, worst_elementwise(scheduler->sigmas(), expected_sigmas));
  } else {
    EXPECT_TRUE(scheduler->sigmas().empty());
  }
  EXPECT_LE(schedule_error, kTolerance);
  const double init_noise_sigma = reference.at("init_noise_sigma").get<double>();
  EXPECT_NEAR(scheduler->init_noise_sigma(), init_noise_sigma, kTolerance * init_noise_sigma);

  const HostTensor x0 = tensors.read_f32("sched.x0");
  const HostTensor trajectory = tensors.read_f32(prefix + "traj");
  const auto step_size = static_cast<std::size_t>(x0.numel());
  ASSERT_EQ(trajectory.shape[0], static_cast<std::int64_t>(scheduler->timesteps().size()) + 1);
  const auto reference_step = [&](std::size_t k) {
    return std::span<const float>(trajectory.data).subspan(k * step_size, step_size);
  };

  const auto noise_scale = static_cast<float>(scheduler->init_noise_sigma());
  HostTensor x = x0;
  for (auto& value : x.data) value *= noise_scale;
  double trajectory_error = relative_l2(x.data, reference_step(0));
  TorchGenerator generator(7);
  std::size_t k = 0;
  for (const double t : scheduler->timesteps()) {
    HostTensor eps = scheduler->scale_model_input(x, t);
    const float offset = 0.01f * (static_cast<float>(t) / 1000.0f);
    for (auto& value : eps.data) value = 0.5f * std::tanh(value) + offset;
    x = scheduler->needs_generator() ? scheduler->step(eps, t, x, generator) : scheduler->step(eps, t, x);
    const double error = relative_l2(x.data, reference_step(++k));
    EXPECT_LE(error, kTolerance) << param.key() << " step " << k << " (t = " << t << ")";
    trajectory_error = std::max(trajectory_error, error);
  }
  auto& worst = worst_[param.name];
  worst.first = std::max(worst.first, trajectory_error);
  worst.second = std::max(worst.second, schedule_error);
}

INSTANTIATE_TEST_SUITE_P(AllSchedulers, SchedulerParity, ::testing::ValuesIn(parity_cases()),
                         [](const ::testing::TestParamInfo<ParityCase>& info) {
                           return info.param.name + "_" + std::to_string(info.param.steps);
                         });

}  // namespace
}  // namespace websd::schedulers
