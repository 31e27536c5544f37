// Inference timesteps spaced over the training schedule as diffusers spaces them
// ("linspace", "leading", "trailing": Table 2 of arXiv 2305.08891). The classes differ in the
// details, so each family has its own function. All return descending timesteps as doubles.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "pipeline/schedulers/scheduler_config.h"

namespace websd::schedulers {

enum class TimestepSpacing { kLinspace, kLeading, kTrailing };

// Reads the `timestep_spacing` key; throws websd::Error naming the value if unknown.
TimestepSpacing read_timestep_spacing(const SchedulerConfig& config);

// Reads `steps_offset`, which diffusers adds to "leading" timesteps only: null is accepted (as 0)
// with the other spacings, where Python never reads it, and refused with "leading", where numpy
// cannot add None. Otherwise an integer in [0, train_steps].
int read_steps_offset(const SchedulerConfig& config, TimestepSpacing spacing, int train_steps);

// DDIM, DDPM, PNDM, Euler, Euler ancestral, LMS, Heun: `count` timesteps. "linspace" gives
// linspace(0, T - 1, count), rounded to integers when `round_linspace` (the integer-timestep classes)
// and left fractional otherwise; "leading" gives i * (T // count) + steps_offset; "trailing" gives
// round(arange(T, 0, -T / count)) - 1.
std::vector<double> spaced_timesteps(TimestepSpacing spacing, int train_steps, int count, int steps_offset,
                                     bool round_linspace);

// DPM-Solver and UniPC: `count` integer timesteps taken from count + 1 points, the last (smallest)
// point dropped. `last_timestep` (T unless lambda_min_clipped cuts the schedule) bounds linspace and
// leading; "leading" steps by last_timestep // (count + 1).
std::vector<double> multistep_spaced_timesteps(TimestepSpacing spacing, int train_steps, int last_timestep, int count,
                                               int steps_offset);

}  // namespace websd::schedulers
