// The training noise schedule every scheduler starts from: betas (linear, scaled_linear,
// squaredcos_cap_v2, DDPM's laplace and sigmoid, Heun's exp, or trained_betas), optionally rescaled
// to zero terminal SNR, and their cumulative alpha products. Values are float32 and rounded where
// torch rounds them (torch.linspace in float32, cumprod accumulated in double and stored as float32),
// so that everything derived from them matches diffusers. Value type; thread-safe for concurrent reads.
#pragma once

#include <vector>

#include "pipeline/schedulers/scheduler_config.h"

namespace websd::schedulers {

struct NoiseSchedule {
  std::vector<float> betas;
  std::vector<float> alphas_cumprod;  // alphas_cumprod[t] = prod_{s <= t} (1 - betas[s])

  int num_train_timesteps() const { return static_cast<int>(alphas_cumprod.size()); }
};

// How a class treats `rescale_betas_zero_snr` (a key only some classes have).
enum class ZeroSnr {
  kNoKey,            // the class has no such key
  kRescale,          // rescale the betas (DDIM, DDPM, LCM)
  kRescaleAndClamp,  // rescale, then set the last alphas_cumprod to 2^-24 so the first sigma is finite
};

// Reads num_train_timesteps, beta_start, beta_end, beta_schedule, trained_betas (and
// rescale_betas_zero_snr per `zero_snr`) from `config`; throws websd::Error on bad values.
NoiseSchedule make_noise_schedule(const SchedulerConfig& config, ZeroSnr zero_snr);

// sqrt((1 - alphas_cumprod) / alphas_cumprod) in float32, ascending in training timestep.
std::vector<float> train_sigmas(const NoiseSchedule& schedule);

}  // namespace websd::schedulers
