// A generation run taken one piece at a time, so that a caller who must yield between device calls
// (a browser tab awaiting WebGPU's read-back) can drive it between awaits:
//
//   GenerationSession session(backend, tokenizer, request, scheduler, progress);
//   session.prepare();                        // the prompt (and init image) encoded once per run
//   for (int i = 0; i < session.image_count(); ++i) {
//     session.start_image(i);                 // seed + i: generator, scheduler restarted, start latents
//     while (session.step()) {}               // one denoising step per call
//     on_image(session.decode());
//   }
//
// Pipeline::generate is exactly this loop (the CLI's synchronous convenience). Random draws, progress
// events and results are the same however the calls are spaced. Borrows the backend, tokenizer and
// scheduler, which must outlive it. Not thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "pipeline/diffusion_backend.h"
#include "pipeline/generation_params.h"
#include "pipeline/img2img.h"
#include "pipeline/pipeline.h"
#include "pipeline/progress.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/schedulers/scheduler.h"
#include "pipeline/tokenizer/clip_tokenizer.h"

namespace websd {

class GenerationSession {
 public:
  // Validates the request (validate_request): a bad one throws websd::Error before any backend call.
  GenerationSession(DiffusionBackend& backend, const ClipTokenizer& tokenizer, const GenerationRequest& request,
                    schedulers::Scheduler& scheduler, ProgressCallback progress = {});

  const GenerationRequest& request() const { return request_; }
  int image_count() const { return request_.params.batch_count; }

  // Encodes the prompt and, for img2img, the init image. Call once, before start_image.
  void prepare();
  // Begins image `index` (0 <= index < image_count()); returns its number of denoising steps.
  int start_image(int index);
  // Runs the current image's next denoising step; false once no step remains (nothing is run then).
  bool step();
  int steps_done() const { return static_cast<int>(step_); }
  // Decodes the current image after its last step. Throws websd::Error if steps remain.
  GeneratedImage decode();

 private:
  DiffusionBackend& backend_;
  const ClipTokenizer& tokenizer_;
  schedulers::Scheduler& scheduler_;
  ProgressCallback progress_;
  GenerationRequest request_;
  std::string sampler_;
  ProgressEvent event_;
  std::optional<HostTensor> context_;
  std::optional<LatentDistribution> distribution_;
  // The image in progress.
  std::optional<TorchGenerator> generator_;
  int index_ = -1;
  std::vector<double> timesteps_;
  std::size_t step_ = 0;
  HostTensor latents_;
};

}  // namespace websd
