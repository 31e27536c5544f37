#include "pipeline/schedulers/timestep_spacing.h"

#include <algorithm>

#include "pipeline/schedulers/numpy_compat.h"

namespace websd::schedulers {

TimestepSpacing read_timestep_spacing(const SchedulerConfig& config) {
  const std::string spacing = config.get_choice("timestep_spacing", {"linspace", "leading", "trailing"});
  if (spacing == "linspace") return TimestepSpacing::kLinspace;
  return spacing == "leading" ? TimestepSpacing::kLeading : TimestepSpacing::kTrailing;
}

int read_steps_offset(const SchedulerConfig& config, TimestepSpacing spacing, int train_steps) {
  if (config.is_null("steps_offset")) {
    if (spacing != TimestepSpacing::kLeading) return 0;
    config.fail("steps_offset", "expected an integer: \"leading\" spacing adds it to every timestep");
  }
  return static_cast<int>(config.get_int("steps_offset", 0, train_steps));
}

std::vector<double> spaced_timesteps(TimestepSpacing spacing, int train_steps, int count, int steps_offset,
                                     bool round_linspace) {
  std::vector<double> timesteps;
  switch (spacing) {
    case TimestepSpacing::kLinspace:
      timesteps = numpy_linspace(0, train_steps - 1, count);
      if (round_linspace) {
        for (auto& t : timesteps) t = numpy_round(t);
      }
      std::reverse(timesteps.begin(), timesteps.end());
      break;
    case TimestepSpacing::kLeading: {
      const int ratio = train_steps / count;
      for (int i = count - 1; i >= 0; --i) timesteps.push_back(static_cast<double>(i) * ratio + steps_offset);
      break;
    }
    case TimestepSpacing::kTrailing:
      timesteps = numpy_arange(train_steps, 0, -static_cast<double>(train_steps) / count);
      for (auto& t : timesteps) t = numpy_round(t) - 1;
      break;
  }
  return timesteps;
}

std::vector<double> multistep_spaced_timesteps(TimestepSpacing spacing, int train_steps, int last_timestep, int count,
                                               int steps_offset) {
  std::vector<double> timesteps;
  switch (spacing) {
    case TimestepSpacing::kLinspace: {
      const auto points = numpy_linspace(0, last_timestep - 1, count + 1);
      for (int i = count; i >= 1; --i) timesteps.push_back(numpy_round(points[static_cast<std::size_t>(i)]));
      break;
    }
    case TimestepSpacing::kLeading: {
      const int ratio = last_timestep / (count + 1);
      for (int i = count; i >= 1; --i) timesteps.push_back(static_cast<double>(i) * ratio + steps_offset);
      break;
    }
    case TimestepSpacing::kTrailing:
      timesteps = numpy_arange(last_timestep, 0, -static_cast<double>(train_steps) / count);
      for (auto& t : timesteps) t = numpy_round(t) - 1;
      break;
  }
  return timesteps;
}

}  // namespace websd::schedulers
