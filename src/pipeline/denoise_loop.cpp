#include "pipeline/denoise_loop.h"

#include "pipeline/finite_check.h"
#include "pipeline/guidance.h"

namespace websd {

HostTensor denoise_latents(DiffusionBackend& backend, schedulers::Scheduler& scheduler,
                           const std::vector<double>& timesteps, HostTensor latents, const HostTensor& context,
                           double guidance_scale, TorchGenerator& generator, const StepCallback& on_step) {
  const int total = static_cast<int>(timesteps.size());
  for (int i = 0; i < total; ++i) {
    const double timestep = timesteps[static_cast<std::size_t>(i)];
    const HostTensor model_input = scheduler.scale_model_input(latents, timestep);
    const HostTensor prediction = guided_prediction(backend, model_input, timestep, context, guidance_scale);
    require_finite(prediction,
                   "the UNet's prediction at step " + std::to_string(i + 1) + " of " + std::to_string(total),
                   kCheckWeightsHint);
    latents = scheduler.step(prediction, timestep, latents, generator);
    if (on_step) on_step(i + 1, total);
  }
  return latents;
}

}  // namespace websd
