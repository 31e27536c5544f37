// A diffusion scheduler with the semantics of its diffusers counterpart: set_timesteps(n) builds the
// inference schedule, then the denoising loop calls scale_model_input and step once per timestep:
//
//   scheduler.set_timesteps(n);
//   x = noise * scheduler.init_noise_sigma();
//   for (t : scheduler.timesteps()) x = scheduler.step(model(scheduler.scale_model_input(x, t), t), t, x);
//
// img2img starts part-way: start_at_strength(s) returns the timesteps to run (the last int(n * s)
// steps, as StableDiffusionImg2ImgPipeline.get_timesteps) and sets the begin index where the diffusers
// class has set_begin_index; add_noise(latents, noise, first kept timestep) makes the starting sample.
//
// Multistep and higher-order schedulers keep history between steps of one run. set_timesteps starts a
// new run; reset() also does, keeping the schedule. Stochastic schedulers (needs_generator()) draw
// their noise from the generator given to step, in the order diffusers draws it, so a seeded run
// reproduces torch's.
//
// Ownership: a scheduler owns its configuration and state. Not thread-safe: one scheduler per run.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/noise_schedule.h"
#include "pipeline/schedulers/prediction_type.h"
#include "pipeline/schedulers/scheduler_config.h"

namespace websd::schedulers {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // The diffusers class this scheduler reproduces, e.g. "EulerDiscreteScheduler".
  const std::string& class_name() const { return config_.class_name(); }
  // Every config key of the class with the value in use.
  const nlohmann::json& config() const { return config_.values(); }
  // What the model predicts, as the config says (checked when the scheduler was made).
  PredictionType prediction_type() const { return read_prediction_type(config_, true); }
  int num_train_timesteps() const { return noise_.num_train_timesteps(); }
  const std::vector<float>& alphas_cumprod() const { return noise_.alphas_cumprod; }

  // Builds the schedule for `num_inference_steps` (1 .. num_train_timesteps) and starts a new run.
  void set_timesteps(int num_inference_steps);
  bool has_timesteps() const { return num_inference_steps_ > 0; }
  int num_inference_steps() const { return num_inference_steps_; }
  // The timesteps in the order the loop visits them (float32 or integer values, as in diffusers).
  const std::vector<double>& timesteps() const { return timesteps_; }
  // One more sigma than timesteps (the last is the final noise level); empty for classes without sigmas.
  const std::vector<double>& sigmas() const { return sigmas_; }

  // Standard deviation of the starting noise: 1 for variance-preserving classes, sigma_max (or
  // sqrt(sigma_max^2 + 1) for "leading" spacing) for the sigma-space ones.
  virtual double init_noise_sigma() const { return 1.0; }
  // Model evaluations per step of the underlying solver (Heun: 2). Scales the img2img offset.
  virtual int order() const { return 1; }
  virtual bool needs_generator() const { return false; }

  // The model input at `timestep` (the sample divided by sqrt(sigma^2 + 1) for sigma-space classes).
  virtual HostTensor scale_model_input(const HostTensor& sample, double timestep);
  // One denoising step from `sample` at `timestep` given the model's prediction; returns the sample
  // at the next timestep. Stochastic classes need the generator overload.
  HostTensor step(const HostTensor& model_output, double timestep, const HostTensor& sample);
  HostTensor step(const HostTensor& model_output, double timestep, const HostTensor& sample, TorchGenerator& generator);
  // `original` noised to the level of `timestep` (the forward process).
  virtual HostTensor add_noise(const HostTensor& original, const HostTensor& noise, double timestep) const = 0;

  // img2img: keeps the last int(num_inference_steps * strength) steps (strength in [0, 1]) and
  // returns their timesteps; sets the begin index where the class has one.
  std::vector<double> start_at_strength(double strength);
  // Whether the diffusers class has set_begin_index (its step counter can start mid-schedule).
  virtual bool has_begin_index() const { return true; }
  void set_begin_index(int begin_index);

  // Forgets the run's history (model outputs, step counter, begin index); keeps the schedule.
  void reset();

 protected:
  Scheduler(SchedulerConfig config, ZeroSnr zero_snr);

  // Fills timesteps_, sigmas_ and num_inference_steps_ for `count` steps (validated by the caller).
  virtual void build_schedule(int count) = 0;
  // `generator` is non-null whenever needs_generator() is true.
  virtual HostTensor step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                 TorchGenerator* generator) = 0;
  virtual void reset_history() {}

  // diffusers' step counter: set from the begin index, or from the timestep's position on first use.
  int step_index_for(double timestep);
  void advance_step_index() { ++*step_index_; }
  std::optional<int> step_index() const { return step_index_; }
  // The schedule position of `timestep`: the second match when it appears twice (so img2img does not
  // skip a sigma), the only match otherwise. Throws if absent unless the class falls back to the end.
  virtual int index_for_timestep(double timestep) const;
  // add_noise's position: the step counter if running, else the begin index, else the timestep's.
  int noise_index_for(double timestep) const;

  void require_timesteps(const char* operation) const;
  // An integer timestep inside the training range (for classes that index alphas_cumprod by it).
  int train_index(double timestep) const;
  [[noreturn]] void fail(const std::string& what) const;

  SchedulerConfig config_;
  NoiseSchedule noise_;
  std::vector<double> timesteps_;
  std::vector<double> sigmas_;
  int num_inference_steps_ = 0;

 private:
  HostTensor checked_step(const HostTensor& model_output, double timestep, const HostTensor& sample,
                          TorchGenerator* generator);

  std::optional<int> step_index_;
  std::optional<int> begin_index_;
};

}  // namespace websd::schedulers
