// The few numpy operations that diffusers' schedulers build their timesteps and sigmas with,
// reproduced element for element (same formulas, same rounding) so that integer timesteps land on
// the same side of every .5 and interpolated sigmas agree to the last bit of float64.
// Pure functions; thread-safe.
#pragma once

#include <vector>

namespace websd::schedulers {

// numpy.linspace(start, stop, num, endpoint) in float64: start + i * step, the last point set to
// `stop` exactly when endpoint is true.
std::vector<double> numpy_linspace(double start, double stop, int num, bool endpoint = true);

// numpy.arange(start, stop, step) for float arguments: ceil((stop - start) / step) values
// start + i * delta, with delta recomputed as (start + step) - start as numpy's fill does.
std::vector<double> numpy_arange(double start, double stop, double step);

// numpy.round: to the nearest integer, halves to even.
double numpy_round(double value);

// numpy.interp(x, arange(fp.size()), fp) for one point; fp holds float32 values (as diffusers' sigma
// arrays do), the interpolation runs in float64. Points outside the range clamp to the ends.
double numpy_interp_index(double x, const std::vector<float>& fp);

}  // namespace websd::schedulers
