#include "pipeline/pipeline.h"

#include <optional>

#include "pipeline/denoise_loop.h"
#include "pipeline/finite_check.h"
#include "pipeline/guidance.h"
#include "pipeline/image_tensor.h"
#include "pipeline/img2img.h"
#include "pipeline/prompt_encoding.h"
#include "pipeline/sampler_name.h"
#include "pipeline/txt2img.h"

namespace websd {
namespace {

// Reports a one-step stage around `work` (start, then done).
template <typename Work>
auto run_stage(const ProgressCallback& progress, ProgressEvent event, Work&& work) {
  event.step = 0;
  event.total_steps = 1;
  if (progress) progress(event);
  auto result = work();
  event.step = 1;
  if (progress) progress(event);
  return result;
}

HostTensor divided(HostTensor tensor, double divisor) {
  const auto value = static_cast<float>(divisor);
  for (float& element : tensor.data) element /= value;
  return tensor;
}

}  // namespace

GenerationRequest validate_request(const GenerationRequest& request, const ModelInfo& info,
                                   schedulers::Scheduler& scheduler) {
  GenerationRequest resolved = resolve_request(request, info);
  scheduler.set_timesteps(resolved.params.steps);
  if (resolved.init_image) scheduler.start_at_strength(resolved.params.strength);
  return resolved;
}

Pipeline::Pipeline(DiffusionBackend& backend, const ClipTokenizer& tokenizer)
    : backend_(backend), tokenizer_(tokenizer) {}

void Pipeline::generate(const GenerationRequest& raw_request, schedulers::Scheduler& scheduler,
                        const ImageCallback& on_image, const ProgressCallback& progress) {
  const ModelInfo& info = backend_.info();
  const GenerationRequest request = validate_request(raw_request, info, scheduler);
  const GenerationParams& params = request.params;
  const bool img2img = request.init_image.has_value();
  const Shape latent_shape = {1, info.latent_channels, params.height / info.vae_scale_factor,
                              params.width / info.vae_scale_factor};
  const std::string sampler = sampler_display_name(scheduler);

  ProgressEvent event{"encode prompt", 0, params.batch_count, 0, 1};
  const HostTensor context = run_stage(progress, event, [&] {
    return encode_prompt_context(backend_, tokenizer_, params.prompt, params.negative_prompt,
                                 guidance_enabled(params.guidance_scale));
  });
  std::optional<LatentDistribution> distribution;
  if (img2img) {  // the encoder is deterministic: one encoding serves every image of the run
    event.stage = "encode image";
    distribution = run_stage(progress, event, [&] { return encode_init_image(backend_, *request.init_image); });
  }

  for (int index = 0; index < params.batch_count; ++index) {
    event.image = index;
    GeneratedImage result;
    result.index = index;
    result.seed = params.seed + static_cast<std::uint64_t>(index);
    TorchGenerator generator(result.seed);
    scheduler.set_timesteps(params.steps);  // a fresh run: multistep history and step counter cleared

    HostTensor start;
    std::vector<double> timesteps;
    if (img2img) {
      Img2ImgStart img2img_state =
          img2img_start(*distribution, info.vae_scaling_factor, params.strength, scheduler, generator);
      start = std::move(img2img_state.latents);
      timesteps = std::move(img2img_state.timesteps);
    } else {
      const HostTensor noise =
          request.init_latents ? latent_row(*request.init_latents, index) : generator.randn(latent_shape);
      start = txt2img_start_latents(noise, scheduler);
      timesteps = scheduler.timesteps();
    }

    event.stage = "denoise";
    event.step = 0;
    event.total_steps = static_cast<int>(timesteps.size());
    if (progress) progress(event);
    result.latents = denoise_latents(backend_, scheduler, timesteps, std::move(start), context, params.guidance_scale,
                                     generator, [&](int done, int total) {
                                       event.step = done;
                                       event.total_steps = total;
                                       if (progress) progress(event);
                                     });

    event.stage = "decode";
    result.unit_image = run_stage(progress, event, [&] {
      const HostTensor decoded = backend_.vae_decode(divided(result.latents, info.vae_scaling_factor));
      require_finite(decoded, "the VAE decoder's image", kCheckWeightsHint);
      return decoded_to_unit_tensor(decoded);
    });
    result.image = unit_tensor_to_image(result.unit_image);
    result.parameters = generation_parameters_text(params, index, sampler, info.name, img2img);
    on_image(result);
  }
}

}  // namespace websd
