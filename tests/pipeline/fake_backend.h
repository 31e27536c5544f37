// A deterministic stand-in for the networks, so pipeline tests check the pipeline's own arithmetic
// and call order without a model:
//   encode_text: row r of the context is filled with (mean of row r's ids) / 100000
//   unet:        prediction = 0.1 * sample + context[row][0][0] (per batch row)
//   vae_decode:  pixel (y, x) of channel c = latent (c, y / 8, x / 8) (channel c < 3)
//   vae_encode:  mean = 8x8 average of channel (c % 3), logvar = -2
//   memory:      every run fits; a VAE decode fits unless decode_fit says otherwise
// It records every call. Not thread-safe.
#pragma once

#include <functional>
#include <vector>

#include "pipeline/host_backend.h"

namespace websd::test {

struct UnetCall {
  HostTensor sample;
  double timestep = 0;
  HostTensor context;
};

class FakeBackend : public HostBackend {
 public:
  FakeBackend();

  const ModelInfo& info() const override { return info_; }
  HostTensor encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) override;
  std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) override;
  HostTensor unet_on_host(const HostTensor& sample, double timestep, const HostTensor& context) override;
  HostTensor vae_decode_on_host(const HostTensor& latents) override;
  // Records the run and the question; a decode fits when `decode_fit` is unset.
  void check_memory(const RunShapes& run) override { memory_checks.push_back(run); }
  DecodeFit vae_decode_fit(const Shape& latents) override {
    fits_questions.push_back(latents);
    return decode_fit ? decode_fit(latents) : DecodeFit::kFits;
  }

  ModelInfo info_;
  std::int64_t hidden = 8;
  std::vector<std::vector<std::int64_t>> text_calls;  // ids of each encode_text call
  std::vector<UnetCall> unet_calls;
  std::vector<HostTensor> decode_calls;
  std::vector<HostTensor> encode_calls;
  std::function<DecodeFit(const Shape&)> decode_fit;
  std::vector<RunShapes> memory_checks;
  std::vector<Shape> fits_questions;
};

}  // namespace websd::test
