#include "pipeline/generation_session.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "pipeline/denoised_preview.h"
#include "pipeline/finite_check.h"
#include "pipeline/guidance.h"
#include "pipeline/image_tensor.h"
#include "pipeline/sampler_name.h"
#include "pipeline/txt2img.h"
#include "pipeline/vae_tile_grid.h"

namespace websd {
namespace {

HostTensor divided(HostTensor tensor, double divisor) {
  const auto value = static_cast<float>(divisor);
  for (float& element : tensor.data) element /= value;
  return tensor;
}

}  // namespace

RunPlan plan_run(DiffusionBackend& backend, const GenerationRequest& request) {
  const GenerationParams& params = request.params;
  const ModelInfo& info = backend.info();
  RunPlan plan;
  RunShapes& run = plan.shapes;
  run.guided = guidance_enabled(params.guidance_scale);
  run.text_rows = run.guided ? 2 : 1;
  run.tokens = info.max_tokens;
  run.latents = {1, info.latent_channels, params.height / info.vae_scale_factor, params.width / info.vae_scale_factor};
  if (request.init_image) run.init_image = Shape{1, 3, params.height, params.width};
  plan.decode = plan_vae_decode(backend, request.vae_tiling, run.latents);
  if (plan.decode.tiles) run.decode_tile = plan.decode.tiles->tile_shape();
  return plan;
}

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

void GenerationSession::require_nothing_pending(const char* action) const {
  if (pending_part_ != Part::kNone) {
    throw Error("pipeline", std::string(action) + " while a part of the run is submitted and not finished");
  }
}

bool GenerationSession::submit_prepare() {
  require_nothing_pending("submit_prepare");
  const GenerationParams& params = request_.params;
  if (!context_) {
    // Every network of the run is checked before the first runs: a decode that cannot fit fails
    // now, not after the denoising steps.
    RunPlan plan = plan_run(backend_, request_);
    decode_plan_ = std::move(plan.decode);
    if (progress_ && !decode_plan_.note.empty()) {
      ProgressEvent note = event_;
      note.note = decode_plan_.note;
      progress_(note);
    }
    backend_.check_memory(plan.shapes);
    backend_.load(plan.shapes);
    event_.stage = "encode prompt";
    if (progress_) progress_(event_);
    prompt_ids_ =
        prompt_token_ids(backend_.info(), tokenizer_, params.prompt, params.negative_prompt, plan.shapes.guided);
    pending_.push_back(backend_.submit_encode_text(prompt_ids_->ids, prompt_ids_->batch));
    pending_part_ = Part::kPrompt;
    return true;
  }
  if (request_.init_image && !distribution_) {  // deterministic: one encoding serves every image
    event_.stage = "encode image";
    if (progress_) progress_(event_);
    auto [mean, logvar] = backend_.submit_vae_encode(image_to_signed_tensor(*request_.init_image));
    pending_.push_back(std::move(mean));
    pending_.push_back(std::move(logvar));
    pending_part_ = Part::kInitImage;
    return true;
  }
  return false;
}

void GenerationSession::finish_prepare() {
  if (pending_part_ != Part::kPrompt && pending_part_ != Part::kInitImage) {
    throw Error("pipeline", "finish_prepare without a submitted part of prepare");
  }
  const Part part = std::exchange(pending_part_, Part::kNone);
  std::vector<TensorDownload> downloads = std::exchange(pending_, {});
  const ModelInfo& info = backend_.info();
  if (part == Part::kPrompt) {
    context_ = backend_.upload(checked_prompt_context(downloads[0].wait(), *prompt_ids_, info));
  } else {
    HostTensor mean = downloads[0].wait();
    distribution_ =
        latent_distribution(std::move(mean), downloads[1].wait(), info, request_.params.height, request_.params.width);
  }
  ProgressEvent done = event_;
  done.step = 1;
  if (progress_) progress_(done);
}

void GenerationSession::prepare() {
  while (submit_prepare()) finish_prepare();
}

bool GenerationSession::ready() const {
  return std::all_of(pending_.begin(), pending_.end(), [](const TensorDownload& download) { return download.ready(); });
}

int GenerationSession::start_image(int index) {
  require_nothing_pending("start_image");
  if (!context_ || (request_.init_image && !distribution_)) {
    throw Error("pipeline", "start_image before prepare: the prompt or the init image is not encoded yet");
  }
  if (index < 0 || index >= image_count()) {
    throw Error("pipeline",
                "image " + std::to_string(index) + " is not one of the run's " + std::to_string(image_count()));
  }
  const GenerationParams& params = request_.params;
  const ModelInfo& info = backend_.info();
  index_ = index;
  event_.image = index;
  preview_ = HostTensor{};
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
  require_nothing_pending("submit_step");
  if (step_ >= timesteps_.size()) return false;
  const double timestep = timesteps_[step_];
  const DeviceTensor model_input = backend_.upload(scheduler_.scale_model_input(latents_, timestep));
  pending_.push_back(
      backend_.download(guided_prediction(backend_, model_input, timestep, *context_, request_.params.guidance_scale)));
  pending_part_ = Part::kStep;
  return true;
}

void GenerationSession::finish_step() {
  if (pending_part_ != Part::kStep) throw Error("pipeline", "finish_step without a submitted step");
  pending_part_ = Part::kNone;
  const HostTensor prediction = std::exchange(pending_, {})[0].wait();
  require_finite(
      prediction,
      "the UNet's prediction at step " + std::to_string(step_ + 1) + " of " + std::to_string(timesteps_.size()),
      kCheckWeightsHint);
  // The step's position in the scheduler's schedule: img2img runs its last timesteps_.size().
  const std::size_t position = scheduler_.timesteps().size() - timesteps_.size() + step_;
  preview_ = denoised_preview(scheduler_, position, prediction, latents_);
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
  require_nothing_pending("submit_decode");
  // The plan was made before the first network ran, and the process has grown since (its thread
  // pool, allocator arenas, kernels' buffers): under a tight limit a whole decode that fitted then
  // may not now. In auto mode it is asked about again, and goes to tiles if it no longer fits.
  if (request_.vae_tiling.mode == VaeTilingMode::kAuto && !decode_plan_.tiles) {
    VaeDecodePlan now = plan_vae_decode(backend_, request_.vae_tiling, latents_.shape);
    if (now.tiles) {
      decode_plan_ = std::move(now);
      if (progress_) {
        ProgressEvent note = event_;
        note.note = decode_plan_.note;
        progress_(note);
      }
    }
  }
  const std::optional<VaeTileGrid>& tiles = decode_plan_.tiles;
  event_.stage = tiles ? "decode tiles" : "decode";
  event_.step = 0;
  event_.total_steps = tiles ? static_cast<int>(tiles->count()) : 1;
  if (progress_) progress_(event_);
  const HostTensor latents = divided(latents_, backend_.info().vae_scaling_factor);
  pending_part_ = Part::kDecode;
  if (!tiles) {
    pending_.push_back(backend_.download(backend_.image_to_rgba(backend_.vae_decode(backend_.upload(latents)))));
    return;
  }
  // One decode per tile, each read back to be blended on the host (finish_decode). On a device
  // that runs calls as they come (the CPU) each step of the progress is one decoded tile.
  for (std::size_t index = 0; index < tiles->count(); ++index) {
    const DeviceTensor tile = backend_.upload(vae_latent_tile(latents, *tiles, index));
    pending_.push_back(backend_.download(backend_.vae_decode(tile)));
    event_.step = static_cast<int>(index + 1);
    if (progress_ && event_.step < event_.total_steps) progress_(event_);
  }
}

GeneratedImage GenerationSession::finish_decode() {
  if (pending_part_ != Part::kDecode) throw Error("pipeline", "finish_decode without a submitted decode");
  pending_part_ = Part::kNone;
  GeneratedImage result;
  std::vector<TensorDownload> downloads = std::exchange(pending_, {});
  if (decode_plan_.tiles) {
    std::vector<HostTensor> tiles;
    for (TensorDownload& download : downloads) tiles.push_back(download.wait());
    // The RGBA conversion on the host, in the float32 order of the compiled image_to_rgba.
    result.rgba = decoded_to_rgba(blend_vae_tiles(*decode_plan_.tiles, tiles));
  } else {
    result.rgba = downloads[0].wait();
  }
  require_finite(result.rgba, "the VAE decoder's image", kCheckWeightsHint);
  event_.step = event_.total_steps;
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
