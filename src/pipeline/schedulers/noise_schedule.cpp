#include "pipeline/schedulers/noise_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>

namespace websd::schedulers {
namespace {

// torch.linspace(start, end, steps, dtype=float32) on the CPU: the step is computed in float, the
// first half counts up from `start` and the second half down from `end`. (torch's vectorised loop
// rounds a few elements differently; the sigmas derived here then differ from diffusers' by at most
// one float32 ulp at a handful of timesteps, far inside the parity tolerance.)
std::vector<float> torch_linspace_f32(double start, double end, int steps) {
  const auto first = static_cast<float>(start);
  const auto last = static_cast<float>(end);
  const float step = (last - first) / static_cast<float>(steps - 1);
  const int halfway = steps / 2;
  std::vector<float> values(static_cast<std::size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    values[static_cast<std::size_t>(i)] =
        i < halfway ? first + step * static_cast<float>(i) : last - step * static_cast<float>(steps - i - 1);
  }
  return values;
}

// diffusers' betas_for_alpha_bar with max_beta 0.999, in float64 then rounded to float32, for the
// alpha_bar of "squaredcos_cap_v2" (Glide's cosine), "laplace" (DDPM only) or "exp" (Heun only).
std::vector<float> alpha_bar_betas(const std::string& kind, int steps) {
  const auto alpha_bar = [&kind](double t) {
    if (kind == "laplace") {
      const double lambda = -0.5 * std::copysign(1.0, 0.5 - t) * std::log(1 - 2 * std::fabs(0.5 - t) + 1e-6);
      const double snr = std::exp(lambda);
      return std::sqrt(snr / (1 + snr));
    }
    if (kind == "exp") return std::exp(t * -12.0);
    const double angle = (t + 0.008) / 1.008 * std::numbers::pi / 2;
    return std::cos(angle) * std::cos(angle);
  };
  std::vector<float> betas(static_cast<std::size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    const double t1 = static_cast<double>(i) / steps;
    const double t2 = static_cast<double>(i + 1) / steps;
    betas[static_cast<std::size_t>(i)] = static_cast<float>(std::min(1 - alpha_bar(t2) / alpha_bar(t1), 0.999));
  }
  return betas;
}

// DDPM's "sigmoid" (GeoDiff) schedule: sigmoid(torch.linspace(-6, 6)) * (end - start) + start in
// float32, the Python scalars rounded to float32 as torch rounds them.
std::vector<float> sigmoid_betas(double start, double end, int steps) {
  std::vector<float> betas = torch_linspace_f32(-6.0, 6.0, steps);
  const auto scale = static_cast<float>(end - start);
  const auto offset = static_cast<float>(start);
  for (auto& beta : betas) beta = 1.0f / (1.0f + std::exp(-beta)) * scale + offset;
  return betas;
}

// The beta schedules a class accepts: every class has the first three, and two classes add their own.
std::vector<std::string> beta_schedules_of(const std::string& class_name) {
  std::vector<std::string> kinds = {"linear", "scaled_linear", "squaredcos_cap_v2"};
  if (class_name == "DDPMScheduler") kinds.insert(kinds.end(), {"laplace", "sigmoid"});
  if (class_name == "HeunDiscreteScheduler") kinds.push_back("exp");
  return kinds;
}

// torch.cumprod on a CPU float tensor: the running product is kept in double, each output rounded.
std::vector<float> cumprod_of_alphas(const std::vector<float>& betas) {
  std::vector<float> products(betas.size());
  double running = 1.0;
  for (std::size_t i = 0; i < betas.size(); ++i) {
    running *= static_cast<double>(1.0f - betas[i]);
    products[i] = static_cast<float>(running);
  }
  return products;
}

// diffusers' rescale_zero_terminal_snr (arXiv 2305.08891, Algorithm 1), in float32 as torch runs it.
std::vector<float> rescale_to_zero_terminal_snr(const std::vector<float>& betas) {
  std::vector<float> root = cumprod_of_alphas(betas);
  for (auto& value : root) value = std::sqrt(value);
  const float first = root.front();
  const float last = root.back();
  const float scale = first / (first - last);
  for (auto& value : root) value = (value - last) * scale;
  std::vector<float> rescaled(betas.size());
  for (std::size_t i = 0; i < root.size(); ++i) {
    const float alpha_bar = root[i] * root[i];
    const float previous = i == 0 ? 1.0f : root[i - 1] * root[i - 1];
    rescaled[i] = 1.0f - (i == 0 ? alpha_bar : alpha_bar / previous);
  }
  return rescaled;
}

std::vector<float> read_betas(const SchedulerConfig& config, int steps) {
  const auto& trained = config.get("trained_betas");
  if (!trained.is_null()) {
    if (!trained.is_array() || static_cast<int>(trained.size()) != steps) {
      config.fail("trained_betas",
                  "expected null or an array of num_train_timesteps (" + std::to_string(steps) + ") numbers");
    }
    std::vector<float> betas;
    for (const auto& beta : trained) {
      if (!beta.is_number() || !(beta.get<double>() >= 0.0 && beta.get<double>() <= 1.0)) {
        config.fail("trained_betas", "every beta must be a number in [0, 1]");
      }
      betas.push_back(beta.get<float>());
    }
    return betas;
  }
  const std::string kind = config.get_choice("beta_schedule", beta_schedules_of(config.class_name()));
  if (kind == "squaredcos_cap_v2" || kind == "laplace" || kind == "exp") return alpha_bar_betas(kind, steps);
  const double start = config.get_number("beta_start");
  const double end = config.get_number("beta_end");
  for (const char* key : {"beta_start", "beta_end"}) {
    const double beta = config.get_number(key);
    if (!(beta >= 0.0 && beta < 1.0)) config.fail(key, "expected a number in [0, 1)");
  }
  if (kind == "linear") return torch_linspace_f32(start, end, steps);
  if (kind == "sigmoid") return sigmoid_betas(start, end, steps);
  std::vector<float> betas = torch_linspace_f32(std::sqrt(start), std::sqrt(end), steps);
  for (auto& beta : betas) beta = beta * beta;
  return betas;
}

}  // namespace

NoiseSchedule make_noise_schedule(const SchedulerConfig& config, ZeroSnr zero_snr) {
  const int steps = static_cast<int>(config.get_int("num_train_timesteps", 2, 1'000'000));
  NoiseSchedule schedule;
  schedule.betas = read_betas(config, steps);
  const bool rescale = zero_snr != ZeroSnr::kNoKey && config.get_bool("rescale_betas_zero_snr");
  if (rescale) schedule.betas = rescale_to_zero_terminal_snr(schedule.betas);
  schedule.alphas_cumprod = cumprod_of_alphas(schedule.betas);
  if (rescale && zero_snr == ZeroSnr::kRescaleAndClamp) schedule.alphas_cumprod.back() = 0x1p-24f;
  return schedule;
}

std::vector<float> train_sigmas(const NoiseSchedule& schedule) {
  std::vector<float> sigmas(schedule.alphas_cumprod.size());
  for (std::size_t i = 0; i < sigmas.size(); ++i) {
    const float alpha = schedule.alphas_cumprod[i];
    sigmas[i] = std::sqrt((1.0f - alpha) / alpha);
  }
  return sigmas;
}

}  // namespace websd::schedulers
