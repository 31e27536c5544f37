#include "pipeline/generation_session.h"

#include "core/error.h"
#include "pipeline/finite_check.h"
#include "pipeline/guidance.h"
#include "pipeline/image_tensor.h"
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

GenerationSession::GenerationSession(DiffusionBackend& backend, const ClipTokenizer& tokenizer,
                                     const GenerationRequest& request, schedulers::Scheduler& scheduler,
                                     ProgressCallback progress)
    : backend_(backend),
      tokenizer_(tokenizer),
      scheduler_(scheduler),
      progress_(std::move(progress)),
      request_(validate_request(request, backend.info(), scheduler)),
      sampler_(sampler_display_name(scheduler)),
      event_{"encode prompt", 0, request_.params.batch_count, 0, 1} {
  if (!progress_) return;
  backend_.set_call_progress([this](std::size_t done, std::size_t total) {
    event_.part = static_cast<int>(done);
    event_.parts = static_cast<int>(total);
    progress_(event_);
    event_.parts = 0;
  });
}

GenerationSession::~GenerationSession() {
  if (progress_) backend_.set_call_progress({});
}

void GenerationSession::prepare() {
  const GenerationParams& params = request_.params;
  // Every network of the run is checked before the first runs: a decode that cannot fit fails now,
  // not after the denoising steps.
  const ModelInfo& info = backend_.info();
  RunShapes run;
  run.guided = guidance_enabled(params.guidance_scale);
  run.text_rows = run.guided ? 2 : 1;
  run.tokens = info.max_tokens;
  run.latents = {1, info.latent_channels, params.height / info.vae_scale_factor, params.width / info.vae_scale_factor};
  if (request_.init_image) run.init_image = Shape{1, 3, params.height, params.width};
  backend_.check_memory(run);
  event_.stage = "encode prompt";
  context_ = run_stage(progress_, event_, [&] {
    return backend_.upload(encode_prompt_context(backend_, tokenizer_, params.prompt, params.negative_prompt,
                                                 guidance_enabled(params.guidance_scale)));
  });
  if (request_.init_image) {  // the encoder is deterministic: one encoding serves every image of the run
    event_.stage = "encode image";
    distribution_ = run_stage(progress_, event_, [&] { return encode_init_image(backend_, *request_.init_image); });
  }
}

int GenerationSession::start_image(int index) {
  if (!context_) throw Error("pipeline", "start_image before prepare: the prompt is not encoded yet");
  if (index < 0 || index >= image_count()) {
    throw Error("pipeline",
                "image " + std::to_string(index) + " is not one of the run's " + std::to_string(image_count()));
  }
  const GenerationParams& params = request_.params;
  const ModelInfo& info = backend_.info();
  if (pending_) throw Error("pipeline", "start_image while a step or decode is submitted and not finished");
  index_ = index;
  event_.image = index;
  generator_.emplace(params.seed + static_cast<std::uint64_t>(index));
  scheduler_.set_timesteps(params.steps);  // a fresh run: multistep history and step counter cleared
  if (distribution_) {
    Img2ImgStart start =
        img2img_start(*distribution_, info.vae_scaling_factor, params.strength, scheduler_, *generator_);
    latents_ = std::move(start.latents);
    timesteps_ = std::move(start.timesteps);
  } else {
    const Shape latent_shape = {1, info.latent_channels, params.height / info.vae_scale_factor,
                                params.width / info.vae_scale_factor};
    const HostTensor noise =
        request_.init_latents ? latent_row(*request_.init_latents, index) : generator_->randn(latent_shape);
    latents_ = txt2img_start_latents(noise, scheduler_);
    timesteps_ = scheduler_.timesteps();
  }
  step_ = 0;
  event_.stage = "denoise";
  event_.step = 0;
  event_.total_steps = static_cast<int>(timesteps_.size());
  if (progress_) progress_(event_);
  return event_.total_steps;
}

bool GenerationSession::submit_step() {
  if (index_ < 0) throw Error("pipeline", "step before start_image");
  if (pending_) throw Error("pipeline", "submit_step while a step or decode is submitted and not finished");
  if (step_ >= timesteps_.size()) return false;
  const double timestep = timesteps_[step_];
  const DeviceTensor model_input = backend_.upload(scheduler_.scale_model_input(latents_, timestep));
  pending_.emplace(
      backend_.download(guided_prediction(backend_, model_input, timestep, *context_, request_.params.guidance_scale)));
  decoding_ = false;
  return true;
}

void GenerationSession::finish_step() {
  if (!pending_ || decoding_) throw Error("pipeline", "finish_step without a submitted step");
  const HostTensor prediction = pending_->wait();
  pending_.reset();
  require_finite(
      prediction,
      "the UNet's prediction at step " + std::to_string(step_ + 1) + " of " + std::to_string(timesteps_.size()),
      kCheckWeightsHint);
  latents_ = scheduler_.step(prediction, timesteps_[step_], latents_, *generator_);
  step_ += 1;
  event_.step = static_cast<int>(step_);
  if (progress_) progress_(event_);
}

bool GenerationSession::step() {
  if (!submit_step()) return false;
  finish_step();
  return true;
}

void GenerationSession::submit_decode() {
  if (index_ < 0 || step_ < timesteps_.size()) {
    throw Error("pipeline", "decode before the image's last denoising step (" + std::to_string(step_) + " of " +
                                std::to_string(timesteps_.size()) + " done)");
  }
  if (pending_) throw Error("pipeline", "submit_decode while a step or decode is submitted and not finished");
  event_.stage = "decode";
  event_.step = 0;
  event_.total_steps = 1;
  if (progress_) progress_(event_);
  const DeviceTensor latents = backend_.upload(divided(latents_, backend_.info().vae_scaling_factor));
  pending_.emplace(backend_.download(backend_.image_to_rgba(backend_.vae_decode(latents))));
  decoding_ = true;
}

GeneratedImage GenerationSession::finish_decode() {
  if (!pending_ || !decoding_) throw Error("pipeline", "finish_decode without a submitted decode");
  GeneratedImage result;
  result.rgba = pending_->wait();
  pending_.reset();
  decoding_ = false;
  require_finite(result.rgba, "the VAE decoder's image", kCheckWeightsHint);
  event_.step = 1;
  if (progress_) progress_(event_);
  result.index = index_;
  result.seed = request_.params.seed + static_cast<std::uint64_t>(index_);
  result.latents = latents_;
  result.image = rgba_to_image(result.rgba);
  result.parameters = generation_parameters_text(request_.params, index_, sampler_, backend_.info().name,
                                                 request_.init_image.has_value());
  return result;
}

GeneratedImage GenerationSession::decode() {
  submit_decode();
  return finish_decode();
}

}  // namespace websd
