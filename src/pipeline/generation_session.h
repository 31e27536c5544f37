// A generation run taken one piece at a time, so that a caller who must yield between device calls
// (a browser tab awaiting WebGPU's read-back) can drive it between awaits:
//
//   GenerationSession session(backend, tokenizer, request, scheduler, progress);
//   while (session.submit_prepare()) {        // every network's memory checked, then the prompt
//     /* await the device until ready() */    // (and, for img2img, the init image) encoded on the
//     session.finish_prepare();               // device once per run; the text context uploaded once
//   }
//   for (int i = 0; i < session.image_count(); ++i) {
//     session.start_image(i);                 // seed + i: generator, scheduler restarted, start latents
//     while (session.submit_step()) {         // the UNet step enqueued on the device, its prediction's
//       /* await the device until ready() */  // read-back too
//       session.finish_step();                // the scheduler's step on the host
//     }
//     session.submit_decode();                // VAE decode and RGBA conversion on the device (or
//                                             // each tile's decode, blended on the host)
//     /* await the device until ready() */
//     on_image(session.finish_decode());
//   }
//
// ready() never blocks (DiffusionBackend's downloads poll the device); once it is true, finish_*
// does not block either. prepare(), step() and decode() are the halves without the await;
// Pipeline::generate is this loop with them (the CLI's synchronous convenience). Per step only the
// scheduler's model input goes to the device and the prediction comes back (the schedulers run on
// the host); the image comes back once, as RGBA. Random draws, progress events and results are the
// same however the calls are spaced. Borrows the backend, tokenizer and scheduler, which must
// outlive it. Not thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "pipeline/device_tensor.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/generation_params.h"
#include "pipeline/img2img.h"
#include "pipeline/pipeline.h"
#include "pipeline/progress.h"
#include "pipeline/prompt_encoding.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/scheduler.h"
#include "pipeline/tokenizer/clip_tokenizer.h"
#include "pipeline/vae_decode_plan.h"

namespace websd {

// The networks a run of `request` calls, with their inputs' shapes, and how it decodes its images:
// what submit_prepare checks and loads before the first network runs, and what a page loads ahead
// of its first request (the web runtime's websd_load_default).
struct RunPlan {
  RunShapes shapes;
  VaeDecodePlan decode;
};
RunPlan plan_run(DiffusionBackend& backend, const GenerationRequest& request);

class GenerationSession {
 public:
  // Validates the request (validate_request): a bad one throws websd::Error before any backend call.
  // With `progress`, the backend's calls also report progress within each step
  // (DiffusionBackend::set_call_progress) until the session is destroyed.
  GenerationSession(DiffusionBackend& backend, const ClipTokenizer& tokenizer, const GenerationRequest& request,
                    schedulers::Scheduler& scheduler, ProgressCallback progress = {});
  ~GenerationSession();
  // The backend holds a callback into the session: it stays where it was made.
  GenerationSession(const GenerationSession&) = delete;
  GenerationSession& operator=(const GenerationSession&) = delete;

  const GenerationRequest& request() const { return request_; }
  int image_count() const { return request_.params.batch_count; }

  // Enqueues the next part of preparing the run; false once the run is prepared (nothing is
  // enqueued then). The first part checks that every network of the run fits in memory
  // (DiffusionBackend::check_memory) and encodes the prompt; for img2img a second part encodes the
  // init image. Throws websd::Error when a part is submitted already.
  bool submit_prepare();
  // Completes the submitted part: waits for its output, checks it (the context is uploaded once).
  void finish_prepare();
  // Every part of submit_prepare and finish_prepare. Call once, before start_image.
  void prepare();
  // Whether the part submitted last (prepare, step or decode) can be finished without waiting for
  // the device; true when none is submitted. Never blocks.
  bool ready() const;
  // Begins image `index` (0 <= index < image_count()); returns its number of denoising steps.
  int start_image(int index);
  // Enqueues the current image's next denoising step on the device; false once no step remains
  // (nothing is enqueued then). Throws websd::Error when a step is submitted already.
  bool submit_step();
  // Completes the submitted step: waits for its prediction, checks it, runs the scheduler's step.
  void finish_step();
  // submit_step, then finish_step when a step was submitted.
  bool step();
  int steps_done() const { return static_cast<int>(step_); }
  // The clean latents (x0, scaled as the UNet's) that the last finished step's prediction points
  // to, for live previews (denoised_preview.h); empty before the image's first step.
  const HostTensor& preview_latents() const { return preview_; }
  // How the images are decoded (whole or in tiles): decided by the first submit_prepare, from the
  // request's vae_tiling and the memory available (vae_decode_plan.h).
  const VaeDecodePlan& decode_plan() const { return decode_plan_; }

  // Enqueues the decoding of the current image after its last step: the VAE decode and the RGBA
  // conversion on the device, or, in tiles, each tile's decode and read-back (the progress's stage
  // "decode tiles" counts them) to be blended on the host. Throws websd::Error if steps remain.
  void submit_decode();
  // Waits for the decoded image and returns it.
  GeneratedImage finish_decode();
  // submit_decode, then finish_decode.
  GeneratedImage decode();

 private:
  DiffusionBackend& backend_;
  const ClipTokenizer& tokenizer_;
  schedulers::Scheduler& scheduler_;
  ProgressCallback progress_;
  GenerationRequest request_;
  std::string sampler_;
  ProgressEvent event_;
  // What the downloads in pending_ are for: the part of the run submitted and not finished.
  enum class Part { kNone, kPrompt, kInitImage, kStep, kDecode };

  // Throws websd::Error naming `action` when a part is submitted and not finished.
  void require_nothing_pending(const char* action) const;

  std::optional<PromptIds> prompt_ids_;
  std::optional<DeviceTensor> context_;  // on the device, for every step of every image
  std::optional<LatentDistribution> distribution_;
  VaeDecodePlan decode_plan_;
  // The image in progress.
  std::optional<TorchGenerator> generator_;
  int index_ = -1;
  std::vector<double> timesteps_;
  std::size_t step_ = 0;
  HostTensor latents_;
  HostTensor preview_;
  Part pending_part_ = Part::kNone;
  // The submitted part's outputs: the context, the init image's mean and logvar, the step's
  // prediction or the image's RGBA.
  std::vector<TensorDownload> pending_;
};

}  // namespace websd
