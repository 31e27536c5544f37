#include "pipeline/schedulers/pndm_scheduler.h"

#include <algorithm>
#include <cmath>

#include "pipeline/schedulers/sample_math.h"

namespace websd::schedulers {
namespace {

constexpr int kPndmOrder = 4;

}  // namespace

std::vector<ConfigKey> PndmScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},
          {"beta_start", 0.0001},
          {"beta_end", 0.02},
          {"beta_schedule", "linear"},
          {"trained_betas", nullptr},
          {"skip_prk_steps", false},
          {"set_alpha_to_one", false},
          {"prediction_type", "epsilon"},
          {"timestep_spacing", "leading"},
          {"steps_offset", 0}};
}

PndmScheduler::PndmScheduler(const nlohmann::json& config, const std::string& origin)
    : AlphaScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kNoKey),
      prediction_(read_prediction_type(config_, false)),
      spacing_(read_timestep_spacing(config_)),
      steps_offset_(read_steps_offset(config_, spacing_, num_train_timesteps())),
      skip_prk_steps_(config_.get_bool("skip_prk_steps")),
      final_alpha_cumprod_(config_.get_bool("set_alpha_to_one") ? 1.0f : noise_.alphas_cumprod.front()) {}

void PndmScheduler::build_schedule(int count) {
  std::vector<double> ascending = spaced_timesteps(spacing_, num_train_timesteps(), count, steps_offset_, true);
  std::reverse(ascending.begin(), ascending.end());
  std::vector<double> plms;
  prk_timesteps_.clear();
  if (skip_prk_steps_) {
    // PLMS repeats the second-to-last timestep: its first step is a half step taken twice.
    plms.assign(ascending.begin(), ascending.end() - 1);
    if (count >= 2) plms.push_back(ascending[ascending.size() - 2]);
    plms.push_back(ascending.back());
    std::reverse(plms.begin(), plms.end());
  } else {
    if (count < kPndmOrder) {
      fail("Runge-Kutta warm-up (skip_prk_steps false) needs at least 4 inference steps, got " + std::to_string(count));
    }
    const int half_step = num_train_timesteps() / count / 2;
    std::vector<double> pairs;  // the last four timesteps, each followed by its midpoint
    for (auto it = ascending.end() - kPndmOrder; it != ascending.end(); ++it) {
      pairs.push_back(*it);
      pairs.push_back(*it + half_step);
    }
    pairs.pop_back();
    std::vector<double> repeated;
    for (const double t : pairs) repeated.insert(repeated.end(), 2, t);
    prk_timesteps_.assign(repeated.rbegin() + 1, repeated.rend() - 1);
    plms.assign(ascending.rbegin() + (kPndmOrder - 1), ascending.rend());
  }
  timesteps_ = prk_timesteps_;
  timesteps_.insert(timesteps_.end(), plms.begin(), plms.end());
  sigmas_.clear();
  num_inference_steps_ = count;
}

void PndmScheduler::reset_history() {
  ets_.clear();
  runge_kutta_sum_ = HostTensor();
  saved_sample_ = HostTensor();
  counter_ = 0;
}

HostTensor PndmScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                      TorchGenerator* /*generator*/) {
  const int t = train_index(timestep);
  if (counter_ < static_cast<int>(prk_timesteps_.size()) && !skip_prk_steps_) return step_prk(model_output, t, sample);
  return step_plms(model_output, t, sample);
}

HostTensor PndmScheduler::step_prk(const HostTensor& model_output, int timestep, const HostTensor& sample) {
  const int diff_to_prev = counter_ % 2 ? 0 : num_train_timesteps() / num_inference_steps_ / 2;
  const int prev_timestep = timestep - diff_to_prev;
  const int stage_timestep = static_cast<int>(prk_timesteps_[static_cast<std::size_t>(counter_ / 4 * 4)]);

  const auto accumulate = [this](const HostTensor& output, float weight) {
    const HostTensor weighted = map_samples(output, [weight](float e) { return weight * e; });
    return runge_kutta_sum_.data.empty()
               ? weighted
               : map_samples(runge_kutta_sum_, weighted, [](float sum, float w) { return sum + w; });
  };
  constexpr auto kSixth = static_cast<float>(1.0 / 6);
  constexpr auto kThird = static_cast<float>(1.0 / 3);
  HostTensor combined = model_output;
  switch (counter_ % 4) {
    case 0:
      runge_kutta_sum_ = accumulate(model_output, kSixth);
      ets_.push_back(model_output);
      saved_sample_ = sample;
      break;
    case 1:
    case 2:
      runge_kutta_sum_ = accumulate(model_output, kThird);
      break;
    default:
      combined = accumulate(model_output, kSixth);
      runge_kutta_sum_ = HostTensor();
      break;
  }
  const HostTensor& base = saved_sample_.data.empty() ? sample : saved_sample_;
  HostTensor prev = previous_sample(base, stage_timestep, prev_timestep, combined);
  ++counter_;
  return prev;
}

HostTensor PndmScheduler::step_plms(const HostTensor& model_output, int timestep, const HostTensor& sample) {
  if (!skip_prk_steps_ && ets_.size() < 3) {
    fail("PLMS steps need the 12 Runge-Kutta warm-up steps first (follow timesteps() from the start)");
  }
  const int stride = num_train_timesteps() / num_inference_steps_;
  int prev_timestep = timestep - stride;
  if (counter_ != 1) {
    if (ets_.size() > 3) ets_.erase(ets_.begin(), ets_.end() - 3);
    ets_.push_back(model_output);
  } else {
    // The repeated timestep: a second evaluation of the first step's half step.
    prev_timestep = timestep;
    timestep += stride;
  }

  HostTensor combined;
  const HostTensor* from = &sample;
  const std::size_t count = ets_.size();
  if (count == 1 && counter_ == 0) {
    combined = model_output;
    saved_sample_ = sample;
  } else if (count == 1 && counter_ == 1) {
    combined = map_samples(model_output, ets_.back(), [](float e, float last) { return (e + last) / 2.0f; });
    from = &saved_sample_;
  } else if (count == 2) {
    combined = map_samples(ets_[1], ets_[0], [](float e1, float e2) { return (3.0f * e1 - e2) / 2.0f; });
  } else if (count == 3) {
    combined = map_samples(ets_[2], ets_[1], ets_[0],
                           [](float e1, float e2, float e3) { return (23.0f * e1 - 16.0f * e2 + 5.0f * e3) / 12.0f; });
  } else {
    constexpr auto kTwentyFourth = static_cast<float>(1.0 / 24);
    const HostTensor partial = map_samples(
        ets_[3], ets_[2], ets_[1], [](float e1, float e2, float e3) { return 55.0f * e1 - 59.0f * e2 + 37.0f * e3; });
    combined = map_samples(partial, ets_[0], [](float p, float e4) { return kTwentyFourth * (p - 9.0f * e4); });
  }
  HostTensor prev = previous_sample(*from, timestep, prev_timestep, combined);
  if (count == 1 && counter_ == 1) saved_sample_ = HostTensor();
  ++counter_;
  return prev;
}

HostTensor PndmScheduler::previous_sample(const HostTensor& sample, int timestep, int prev_timestep,
                                          const HostTensor& model_output) const {
  const float alpha = alpha_cumprod_at(train_index(timestep));
  const float alpha_prev = prev_timestep >= 0 ? alpha_cumprod_at(train_index(prev_timestep)) : final_alpha_cumprod_;
  const float beta = 1.0f - alpha;
  const float beta_prev = 1.0f - alpha_prev;
  HostTensor epsilon = model_output;
  if (prediction_ == PredictionType::kVPrediction) {
    const float root_alpha = std::sqrt(alpha);
    const float root_beta = std::sqrt(beta);
    epsilon = map_samples(model_output, sample, [&](float v, float x) { return root_alpha * v + root_beta * x; });
  }
  const float sample_scale = std::sqrt(alpha_prev / alpha);
  const float denominator = alpha * std::sqrt(beta_prev) + std::sqrt(alpha * beta * alpha_prev);
  const float alpha_step = alpha_prev - alpha;
  return map_samples(sample, epsilon,
                     [&](float x, float e) { return sample_scale * x - alpha_step * e / denominator; });
}

}  // namespace websd::schedulers
