#include "pipeline_test_support.h"

#include "pipeline/tokenizer/clip_tokenizer_loader.h"
#include "support/fixtures.h"

namespace websd::test {

const ClipTokenizer& fixture_tokenizer() {
  static const ClipTokenizer tokenizer = load_clip_tokenizer(fixture_path("clip-tokenizer"));
  return tokenizer;
}

std::vector<GeneratedImage> run_pipeline(FakeBackend& backend, const GenerationRequest& request,
                                         const std::string& scheduler_name, const ProgressCallback& progress) {
  const auto scheduler = schedulers::create_scheduler_by_name(scheduler_name);
  std::vector<GeneratedImage> images;
  Pipeline pipeline(backend, fixture_tokenizer());
  pipeline.generate(
      request, *scheduler, [&](const GeneratedImage& image) { images.push_back(image); }, progress);
  return images;
}

std::vector<std::int64_t> padded_ids(const std::string& text) {
  const auto ids = fixture_tokenizer().encode(text);
  return {ids.begin(), ids.end()};
}

float context_value(const std::string& text) {
  const auto ids = padded_ids(text);
  std::int64_t sum = 0;
  for (const auto id : ids) sum += id;
  return static_cast<float>(sum) / static_cast<float>(ids.size()) / 100000.0f;
}

HostTensor reference_loop(schedulers::Scheduler& scheduler, const std::vector<double>& timesteps,
                          const GenerationParams& params, TorchGenerator& generator, HostTensor latents) {
  const float uncond = context_value(params.negative_prompt);
  const float cond = context_value(params.prompt);
  const auto g = static_cast<float>(params.guidance_scale);
  for (const double t : timesteps) {
    const HostTensor input = scheduler.scale_model_input(latents, t);
    HostTensor prediction(input.shape);
    for (std::size_t i = 0; i < input.data.size(); ++i) {
      const float u = 0.1f * input.data[i] + uncond;
      const float c = 0.1f * input.data[i] + cond;
      prediction.data[i] = u + g * (c - u);
    }
    latents = scheduler.step(prediction, t, latents, generator);
  }
  return latents;
}

GenerationRequest small_request(int steps) {
  GenerationRequest request;
  request.params.prompt = "a red fox in the snow";
  request.params.negative_prompt = "blurry";
  request.params.steps = steps;
  request.params.guidance_scale = 7.5;
  request.params.seed = 42;
  return request;
}

}  // namespace websd::test
