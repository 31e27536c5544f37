// Sigma-space helpers shared by the k-diffusion style schedulers (Euler, LMS, Heun) and the
// multistep solvers (DPM-Solver++, UniPC): the Karras et al. (2022) noise levels, the inverse map
// from a sigma to a fractional training timestep, and the variance-preserving (alpha, sigma) pair of
// a sigma, and the reading of the Karras bounds from a config. Arithmetic follows diffusers' dtypes
// (numpy float64 where it uses numpy, float32 where it uses torch tensors). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipeline/schedulers/scheduler_config.h"

namespace websd::schedulers {

// Karras sigmas: (max^(1/rho) + ramp * (min^(1/rho) - max^(1/rho)))^rho with rho = 7 over
// `count` points of ramp = linspace(0, 1).
std::vector<double> karras_sigmas(double sigma_min, double sigma_max, int count);

// Reads a Karras bound, `sigma_min` or `sigma_max` (Euler, UniPC); null leaves it to the schedule's
// end. diffusers reads them for Karras sigmas only, so without `karras` any number or null is accepted
// and ignored; with it the bound must be positive (0 makes the last steps divide by a zero sigma).
std::optional<double> read_karras_bound(const SchedulerConfig& config, const std::string& key, bool karras);

// np.log of a float32 array, kept in float32.
std::vector<float> log_f32(const std::vector<float>& values);

// diffusers' _sigma_to_t: the fractional training timestep whose log-sigma, interpolated linearly
// between neighbouring entries of `log_sigmas` (ascending), equals log(sigma).
double sigma_to_timestep(double sigma, const std::vector<float>& log_sigmas);

// The variance-preserving coefficients of a sigma: alpha = 1 / sqrt(sigma^2 + 1), sigma_t = sigma *
// alpha, and the log-SNR lambda = log(alpha) - log(sigma_t) (+infinity at sigma 0), in float32.
struct VpCoefficients {
  float alpha;
  float sigma;
  float lambda;
};
VpCoefficients vp_coefficients(float sigma);

}  // namespace websd::schedulers
