#include "pipeline/schedulers/lms_discrete_scheduler.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "pipeline/schedulers/sample_math.h"

namespace websd::schedulers {

std::vector<ConfigKey> LmsDiscreteScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},     {"beta_start", 0.0001},     {"beta_end", 0.02},
          {"beta_schedule", "linear"},       {"trained_betas", nullptr}, {"use_karras_sigmas", false},
          {"use_exponential_sigmas", false}, {"use_beta_sigmas", false}, {"prediction_type", "epsilon"},
          {"timestep_spacing", "linspace"},  {"steps_offset", 0}};
}

LmsDiscreteScheduler::LmsDiscreteScheduler(const nlohmann::json& config, const std::string& origin)
    : SigmaScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kNoKey),
      prediction_(read_prediction_type(config_, true)),
      karras_(read_karras_flag()) {}

void LmsDiscreteScheduler::build_schedule(int count) {
  SigmaOptions options;
  options.karras = karras_;
  build_sigma_schedule(count, options);
}

double LmsDiscreteScheduler::lms_coefficient(int order, int index, int current) const {
  const auto sigma = [this, index](int back) { return static_cast<double>(sigma_at(index - back)); };
  const auto basis = [&](double tau) {
    double product = 1.0;
    for (int k = 0; k < order; ++k) {
      if (k != current) product *= (tau - sigma(k)) / (sigma(current) - sigma(k));
    }
    return product;
  };
  // The basis polynomial has degree <= 3, which 4-point Gauss-Legendre integrates exactly (diffusers
  // calls scipy's adaptive quad, which is exact on it to rounding too).
  constexpr std::array<double, 4> kNodes = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563,
                                            0.8611363115940526};
  constexpr std::array<double, 4> kWeights = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461,
                                              0.3478548451374538};
  const double lower = sigma(0);
  const double upper = static_cast<double>(sigma_at(index + 1));
  const double half_width = (upper - lower) / 2;
  const double middle = (upper + lower) / 2;
  double integral = 0.0;
  for (std::size_t i = 0; i < kNodes.size(); ++i) integral += kWeights[i] * basis(middle + half_width * kNodes[i]);
  return integral * half_width;
}

HostTensor LmsDiscreteScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                             TorchGenerator* /*generator*/) {
  const int index = step_index_for(timestep);
  const float sigma = sigma_at(index);
  HostTensor x0 = x0_from_sigma_output(prediction_, sample, model_output, sigma);
  derivatives_.push_back(map_samples(sample, x0, [sigma](float x, float x0v) { return (x - x0v) / sigma; }));
  if (static_cast<int>(derivatives_.size()) > kOrder) derivatives_.pop_front();

  // The order follows the step counter; after an img2img start fewer derivatives exist, and only as
  // many coefficients as derivatives are used (Python's zip).
  const int order = std::min(index + 1, kOrder);
  const int terms = std::min(order, static_cast<int>(derivatives_.size()));
  HostTensor total;
  for (int j = 0; j < terms; ++j) {
    const auto coefficient = static_cast<float>(lms_coefficient(order, index, j));
    const HostTensor& derivative = derivatives_[derivatives_.size() - 1 - static_cast<std::size_t>(j)];
    total = j == 0 ? map_samples(derivative, [coefficient](float d) { return coefficient * d; })
                   : map_samples(total, derivative, [coefficient](float s, float d) { return s + coefficient * d; });
  }
  advance_step_index();
  return map_samples(sample, total, [](float x, float s) { return x + s; });
}

}  // namespace websd::schedulers
