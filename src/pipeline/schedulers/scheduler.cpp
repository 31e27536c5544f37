#include "pipeline/schedulers/scheduler.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace websd::schedulers {
namespace {

std::string format_number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace

Scheduler::Scheduler(SchedulerConfig config, ZeroSnr zero_snr)
    : config_(std::move(config)), noise_(make_noise_schedule(config_, zero_snr)) {}

void Scheduler::fail(const std::string& what) const { throw Error("scheduler", class_name() + ": " + what); }

void Scheduler::set_timesteps(int num_inference_steps) {
  if (num_inference_steps < 1 || num_inference_steps > num_train_timesteps()) {
    fail("cannot run " + std::to_string(num_inference_steps) +
         " inference steps (use 1 to num_train_timesteps = " + std::to_string(num_train_timesteps()) + ")");
  }
  build_schedule(num_inference_steps);
  reset();
}

void Scheduler::reset() {
  step_index_.reset();
  begin_index_.reset();
  reset_history();
}

void Scheduler::require_timesteps(const char* operation) const {
  if (!has_timesteps()) fail(std::string(operation) + " before set_timesteps (call set_timesteps(steps) first)");
}

HostTensor Scheduler::scale_model_input(const HostTensor& sample, double /*timestep*/) {
  require_timesteps("scale_model_input");
  return sample;
}

HostTensor Scheduler::step(const HostTensor& model_output, double timestep, const HostTensor& sample) {
  if (needs_generator()) {
    fail("step draws noise, so it needs a TorchGenerator (pass the run's seeded generator)");
  }
  return checked_step(model_output, timestep, sample, nullptr);
}

HostTensor Scheduler::step(const HostTensor& model_output, double timestep, const HostTensor& sample,
                           TorchGenerator& generator) {
  return checked_step(model_output, timestep, sample, &generator);
}

HostTensor Scheduler::checked_step(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                   TorchGenerator* generator) {
  require_timesteps("step");
  if (model_output.shape != sample.shape || model_output.numel() != sample.numel()) {
    fail("model output " + shape_to_string(model_output.shape) + " and sample " + shape_to_string(sample.shape) +
         " differ in shape (the model must predict one value per latent element)");
  }
  return step_sample(model_output, timestep, sample, generator);
}

std::vector<double> Scheduler::start_at_strength(double strength) {
  require_timesteps("start_at_strength");
  if (!(strength >= 0.0 && strength <= 1.0)) {
    fail("strength " + format_number(strength) + " is outside [0, 1]");
  }
  const int kept = std::min(static_cast<int>(num_inference_steps_ * strength), num_inference_steps_);
  if (kept == 0) {
    fail("strength " + format_number(strength) + " keeps none of the " + std::to_string(num_inference_steps_) +
         " steps (raise the strength or the number of steps)");
  }
  const int begin = (num_inference_steps_ - kept) * order();
  if (has_begin_index()) set_begin_index(begin);
  return {timesteps_.begin() + begin, timesteps_.end()};
}

void Scheduler::set_begin_index(int begin_index) {
  require_timesteps("set_begin_index");
  if (begin_index < 0 || begin_index >= static_cast<int>(timesteps_.size())) {
    fail("begin index " + std::to_string(begin_index) + " is outside the " + std::to_string(timesteps_.size()) +
         " timesteps");
  }
  begin_index_ = begin_index;
}

int Scheduler::index_for_timestep(double timestep) const {
  std::vector<int> matches;
  for (std::size_t i = 0; i < timesteps_.size(); ++i) {
    if (timesteps_[i] == timestep) matches.push_back(static_cast<int>(i));
  }
  if (matches.empty()) {
    fail("timestep " + format_number(timestep) + " is not in the schedule (pass one of timesteps())");
  }
  return matches.size() > 1 ? matches[1] : matches[0];
}

int Scheduler::step_index_for(double timestep) {
  if (!step_index_) step_index_ = begin_index_ ? *begin_index_ : index_for_timestep(timestep);
  if (*step_index_ >= static_cast<int>(timesteps_.size())) {
    fail("all " + std::to_string(timesteps_.size()) +
         " timesteps have been stepped (call set_timesteps or reset to start a new run)");
  }
  return *step_index_;
}

int Scheduler::noise_index_for(double timestep) const {
  if (!begin_index_) return index_for_timestep(timestep);
  return step_index_ ? *step_index_ : *begin_index_;
}

int Scheduler::train_index(double timestep) const {
  if (!(timestep >= 0 && timestep < num_train_timesteps()) || std::floor(timestep) != timestep) {
    fail("timestep " + format_number(timestep) + " is not an integer in [0, " + std::to_string(num_train_timesteps()) +
         ") (pass one of timesteps())");
  }
  return static_cast<int>(timestep);
}

}  // namespace websd::schedulers
