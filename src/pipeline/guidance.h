// Classifier-free guidance as diffusers' StableDiffusionPipeline applies it: with a guidance scale
// g > 1 the UNet runs once on the batch (x, x) with the context rows (negative, prompt), and the
// prediction is uncond + g * (cond - uncond) in float32. With g <= 1 only the conditional half runs.
// Stateless functions; the backend is used from the calling thread only.
#pragma once

#include "core/host_tensor.h"
#include "pipeline/diffusion_backend.h"

namespace websd {

// Whether a run with this scale evaluates the unconditional half (diffusers: guidance_scale > 1).
bool guidance_enabled(double guidance_scale);

// `first` and `second`, both [1, ...] of one shape, stacked into [2, ...].
HostTensor stack_pair(const HostTensor& first, const HostTensor& second);

// uncond + g * (cond - uncond) for a [2, ...] prediction holding (uncond, cond); returns [1, ...].
HostTensor combine_guided(const HostTensor& prediction_pair, double guidance_scale);

// The model's prediction for `model_input` [1, C, h, w] at `timestep`, on the device: unet_guided
// when guidance_enabled(guidance_scale) (then `context` has 2 rows: negative, prompt), else unet on
// a 1-row context. Throws websd::Error for a context of the wrong rows or a prediction of another shape.
DeviceTensor guided_prediction(DiffusionBackend& backend, const DeviceTensor& model_input, double timestep,
                               const DeviceTensor& context, double guidance_scale);

}  // namespace websd
