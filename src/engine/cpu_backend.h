// DiffusionBackend on the CPU graph executor: opens a diffusers checkpoint folder, reads the three
// networks' configs, checks every weight file against the networks' parameter lists at open (one
// websd::Error naming the file and the tensors), then builds each network's graph for the shapes it
// is called with. One executor is cached per network and input shape; weights are read (upcast to
// float32) once per tensor and shared by all executors.
//
//   CpuBackend backend("/models/sd15");
//   Pipeline pipeline(backend, tokenizer);
//
// Ownership: owns the checkpoint mapping, weights and executors. Not thread-safe: one call at a time
// (each call already uses all cores).
#pragma once

#include <memory>
#include <string>

#include "pipeline/diffusion_backend.h"

namespace websd::engine {

class CpuBackend final : public DiffusionBackend {
 public:
  // Throws websd::Error for a missing or broken folder, an unsupported config, configs that do not
  // fit together (UNet vs VAE channels, UNet context width vs text encoder), or weights that do not
  // match the networks.
  explicit CpuBackend(const std::string& model_dir);
  ~CpuBackend() override;
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  const ModelInfo& info() const override;
  HostTensor encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) override;
  HostTensor unet(const HostTensor& sample, double timestep, const HostTensor& context) override;
  HostTensor vae_decode(const HostTensor& latents) override;
  std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) override;

  // Executors built so far (all networks and shapes), for tests of the cache.
  std::size_t executor_count() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace websd::engine
