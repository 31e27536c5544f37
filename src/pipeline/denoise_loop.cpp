#include "pipeline/denoise_loop.h"

#include "pipeline/finite_check.h"
#include "pipeline/guidance.h"

namespace websd {

HostTensor denoise_step(DiffusionBackend& backend, schedulers::Scheduler& scheduler,
                        const std::vector<double>& timesteps, std::size_t index, const HostTensor& latents,
                        const HostTensor& context, double guidance_scale, TorchGenerator& generator) {
  const double timestep = timesteps.at(index);
  const HostTensor model_input = scheduler.scale_model_input(latents, timestep);
  const HostTensor prediction = guided_prediction(backend, model_input, timestep, context, guidance_scale);
  require_finite(
      prediction,
      "the UNet's prediction at step " + std::to_string(index + 1) + " of " + std::to_string(timesteps.size()),
      kCheckWeightsHint);
  return scheduler.step(prediction, timestep, latents, generator);
}

}  // namespace websd
