// Shared pieces of the pipeline tests: the fixture CLIP tokenizer and a run that collects images.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fake_backend.h"
#include "pipeline/pipeline.h"
#include "pipeline/schedulers/scheduler_factory.h"

namespace websd::test {

// The CLIP ViT-L/14 tokenizer of the shared fixtures (loaded once).
const ClipTokenizer& fixture_tokenizer();

// Runs `request` through a Pipeline on `backend` with a fresh scheduler of `scheduler_name`.
std::vector<GeneratedImage> run_pipeline(FakeBackend& backend, const GenerationRequest& request,
                                         const std::string& scheduler_name, const ProgressCallback& progress = {});

// A 4-channel latent shape for the fake backend's default 32x32 images.
inline const Shape kLatentShape = {1, 4, 4, 4};

// Padded token ids of `text`, and the fake backend's context value for it.
std::vector<std::int64_t> padded_ids(const std::string& text);
float context_value(const std::string& text);

// The denoising loop as the fixtures README describes it, written out independently of the pipeline
// for the fake backend: prediction = u + g (c - u) with u, c = 0.1 x + context value.
HostTensor reference_loop(schedulers::Scheduler& scheduler, const std::vector<double>& timesteps,
                          const GenerationParams& params, TorchGenerator& generator, HostTensor latents);

// A small request: prompt, negative prompt, `steps` steps, guidance 7.5, seed 42.
GenerationRequest small_request(int steps);

}  // namespace websd::test
