// DiffusionBackend that compiles a checkpoint on the fly: opens it (diffusers folder or single file),
// reads the three networks' configs, checks every weight file against the networks' parameter
// lists at open (one websd::Error naming the file and the tensors), then builds each network's
// graph for the shapes it is called with, compiles it with the cpu target's pass list (the one
// `websd build` runs; fused elementwise groups run on the runtime's interpreting kernel instead of a
// generated library), plans its memory, lowers it to a launch list and runs it on
// runtime::Executor over the CPU device, as an artifact would run. One executor is cached per
// network and input shape; weights are made (upcast to float32, Q/K/V projections merged as the
// passes ask, convolution weights packed) once and shared by the network's executors. Its device
// is host memory (HostBackend): guidance and the RGBA conversion run on the host. By
// default only the network being called stays loaded (Residency). An optional tuning database gives
// the executors their tuned kernel parameters (see src/tuning); workloads without a record run with
// the kernels' defaults.
//
//   CheckpointBackend backend("/models/sd15");
//   Pipeline pipeline(backend, tokenizer);
//
// Ownership: owns the checkpoint mapping, weights and executors. Not thread-safe: one call at a time
// (each call already uses all cores).
#pragma once

#include <memory>
#include <string>

#include "backends/prepared_weight_cache.h"
#include "backends/residency.h"
#include "import/diffusers_checkpoint.h"
#include "pipeline/host_backend.h"
#include "runtime/op_profile.h"
#include "tuning/tuning_db.h"

namespace websd::backends {


// Tunable kernels of the executors built so far, and how many of them had a tuning record.
struct TuningCoverage {
  std::size_t tuned = 0;
  std::size_t tunable = 0;
};

class CheckpointBackend final : public HostBackend {
 public:
  // Throws websd::Error for a missing or broken folder, an unsupported config, configs that do not
  // fit together (UNet vs VAE channels, UNet context width vs text encoder), or weights that do not
  // match the networks. `tuning_db` (may be nullptr) is copied.
  explicit CheckpointBackend(const std::string& model_dir, Residency residency = Residency::kOneNetwork,
                             const tuning::TuningDb* tuning_db = nullptr);
  // The same on a checkpoint opened already (a folder or a single file, with the user's options).
  explicit CheckpointBackend(std::shared_ptr<const DiffusersCheckpoint> checkpoint,
                             Residency residency = Residency::kOneNetwork, const tuning::TuningDb* tuning_db = nullptr);
  ~CheckpointBackend() override;
  CheckpointBackend(const CheckpointBackend&) = delete;
  CheckpointBackend& operator=(const CheckpointBackend&) = delete;

  const ModelInfo& info() const override;
  // Compiles every network of the run (kept for its calls) and checks each, alone, as
  // Residency::kOneNetwork runs them: intermediates, float32 weights and workspace.
  void check_memory(const RunShapes& run) override;
  // Compiles the decoder for `latents` (kept for its calls) and checks it as check_memory does.
  DecodeFit vae_decode_fit(const Shape& latents) override;
  HostTensor encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) override;
  std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) override;
  // Reports the launches of each network call as they finish.
  void set_call_progress(CallProgress progress) override;

  // Takes prepared weights from `cache` and writes those it had to prepare there (see
  // prepared_weight_cache.h); without it, every run prepares its weights from the checkpoint.
  // Must come before the first call; throws websd::Error after it.
  void use_weight_cache(std::shared_ptr<PreparedWeightCache> cache);
  bool uses_weight_cache() const;
  // Convolutions, linear layers and attention compute in `compute`: f32 (the default) or bf16,
  // which needs a CPU with native bf16 (cpu::onednn_bf16_available; the first call fails clearly
  // elsewhere). Must come before anything is compiled (the first call or check); throws
  // websd::Error after it.
  void compute_in(DType compute);
  // Whether `component` ("text_encoder", "unet", "vae") found its weights in the cache (as of now).
  bool weight_cache_hit(const std::string& component) const;

  // Times every kernel of every later call into `profile` (nullptr stops); for `websd bench --profile`.
  void set_profile(runtime::OpProfile* profile);

  // Executors held now (all networks and shapes), for tests of the cache.
  std::size_t executor_count() const;
  // Weight tensors prepared from the checkpoint and held now (all networks; f32, or bf16 where a
  // bf16 kernel reads them), not those mapped from the prepared-weight cache.
  std::size_t loaded_weight_count() const;
  // Over every network and input shape run so far (each counted once, even if rebuilt).
  TuningCoverage tuning_coverage() const;

 protected:
  HostTensor unet_on_host(const HostTensor& sample, double timestep, const HostTensor& context) override;
  HostTensor vae_decode_on_host(const HostTensor& latents) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace websd::backends
