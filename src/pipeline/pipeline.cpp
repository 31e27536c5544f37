#include "pipeline/pipeline.h"

#include "pipeline/generation_session.h"

namespace websd {

GenerationRequest validate_request(const GenerationRequest& request, const ModelInfo& info,
                                   schedulers::Scheduler& scheduler) {
  GenerationRequest resolved = resolve_request(request, info);
  scheduler.set_timesteps(resolved.params.steps);
  if (resolved.init_image) scheduler.start_at_strength(resolved.params.strength);
  return resolved;
}

Pipeline::Pipeline(DiffusionBackend& backend, const ClipTokenizer& tokenizer)
    : backend_(backend), tokenizer_(tokenizer) {}

void Pipeline::generate(const GenerationRequest& request, schedulers::Scheduler& scheduler,
                        const ImageCallback& on_image, const ProgressCallback& progress) {
  GenerationSession session(backend_, tokenizer_, request, scheduler, progress);
  session.prepare();
  for (int index = 0; index < session.image_count(); ++index) {
    session.start_image(index);
    while (session.step()) {
    }
    on_image(session.decode());
  }
}

}  // namespace websd
