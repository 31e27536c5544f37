// DiffusionBackend over an artifact written by `websd build` (see src/artifact/FORMAT.md): the
// functions' launch lists run on runtime::Executor over the device registered for the artifact's
// target (targets/device_registry.h; planned arenas, nothing compiled at load), generated kernels
// come from the artifact's verified kernel files, weights are read from the verified shards (on
// the CPU device f32 ones are used in place from the memory-mapped shard, f16/bf16 ones widened to
// float32 once). The artifact holds the functions of one or more image sizes (artifact/image_sizes.h)
// and each call runs the one built for its shapes; a call for a size it lacks is a clear error
// that says how to rebuild. By default only the network being called keeps its executors
// and widened weights (backends::Residency); the functions of one network share one device copy of
// each weight they have in common (runtime::DeviceWeightCache).
//
//   ArtifactBackend backend("sd15.art");
//   Pipeline pipeline(backend, tokenizer);
//
// Ownership: owns the artifact, the kernel library, the executors. Not thread-safe.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "artifact/artifact_source.h"
#include "artifact/image_sizes.h"
#include "artifact/shard_load_times.h"
#include "backends/residency.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/tokenizer/clip_tokenizer.h"
#include "runtime/device.h"
#include "runtime/load_times.h"
#include "runtime/op_profile.h"

namespace websd::runtime {
class Executor;
}  // namespace websd::runtime

namespace websd::backends {

// What opening an artifact may need besides its folder.
struct ArtifactAccess {
  std::optional<std::string> key_file;       // an encrypted artifact's key (--key-file)
  std::vector<std::string> trust_key_files;  // accept only an artifact signed by one of these (--trust-key)
  std::string tier;  // the kernel tier whose launch lists to run (the manifest's `tiers`); empty: the base
};

class ArtifactBackend final : public DiffusionBackend {
 public:
  // Throws websd::Error("artifact", ...) for everything Artifact::open refuses (not an artifact,
  // version, seal, signature, a target no registered device runs, shards, key), a kernel library
  // that cannot be loaded, a launch list that does not read back, or one the device cannot run
  // (runtime::check_fits_device: value dtypes it does not store, buffers beyond its limits). `device` (for tests: a
  // device wrapping another) replaces the registry's device for the artifact's target; the backend owns it.
  explicit ArtifactBackend(const std::string& artifact_dir, const ArtifactAccess& access = {},
                           Residency residency = Residency::kOneNetwork,
                           std::unique_ptr<runtime::Device> device = nullptr);
  // The artifact whose files `source` gives (a browser's fetched files), as above.
  explicit ArtifactBackend(std::unique_ptr<artifact::ArtifactSource> source, const ArtifactAccess& access = {},
                           Residency residency = Residency::kOneNetwork,
                           std::unique_ptr<runtime::Device> device = nullptr);
  ~ArtifactBackend() override;
  ArtifactBackend(const ArtifactBackend&) = delete;
  ArtifactBackend& operator=(const ArtifactBackend&) = delete;

  const ModelInfo& info() const override;
  // Checks each function the run calls, alone (as Residency::kOneNetwork runs them): its memory
  // plan's arenas, its weights as float32 and the convolutions' workspace.
  void check_memory(const RunShapes& run) override;
  // Under Residency::kAllNetworks, makes the executors of every function the run calls (their
  // weights uploaded) now; under kOneNetwork, where each call drops the other networks, nothing.
  void load(const RunShapes& run) override;
  bool load_part(const RunShapes& run, std::uint64_t bytes) override;
  // Checks the artifact's decoder for `latents` as check_memory does (kNoDecoder: it holds none).
  DecodeFit vae_decode_fit(const Shape& latents) override;
  // submit_encode_text and submit_vae_encode, waited for.
  HostTensor encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) override;
  std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) override;
  // Enqueued on the device; each download must be waited for before the next call that runs a
  // function (which may drop the executor it reads from) and before the backend is destroyed.
  TensorDownload submit_encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) override;
  std::pair<TensorDownload, TensorDownload> submit_vae_encode(const HostTensor& image) override;
  // Reports the launches of each function call as they finish.
  void set_call_progress(CallProgress progress) override;
  // Device tensors are buffers of the backend's device, reused once their last handle is dropped
  // (runtime::BufferCache: after the first step, a step allocates nothing on the device). upload
  // has read the host tensor when it returns; a download must be waited for before the backend is
  // destroyed.
  DeviceTensor upload(const HostTensor& tensor) override;
  TensorDownload download(const DeviceTensor& tensor) override;
  DeviceTensor unet(const DeviceTensor& sample, double timestep, const DeviceTensor& context) override;
  // Runs the artifact's compiled unet_cfg: the guidance batch and combination on the device.
  DeviceTensor unet_guided(const DeviceTensor& sample, double timestep, const DeviceTensor& context,
                           double guidance_scale) override;
  // Runs the artifact's decoder whose input has the shape of `latents` (the whole image's, or the
  // tiles' of a tiled decode); none: websd::Error naming the decoder shapes it holds.
  DeviceTensor vae_decode(const DeviceTensor& latents) override;
  // Runs the artifact's compiled image_to_rgba.
  DeviceTensor image_to_rgba(const DeviceTensor& image) override;

  // The model's tokenizer, made from the artifact's model/tokenizer/ files as the manifest lists and
  // checks them (never from other files that lie in the folder).
  ClipTokenizer tokenizer() const;
  // The model's scheduler config, model/scheduler/scheduler_config.json as the manifest lists and
  // checks it; null when the artifact holds none.
  nlohmann::json scheduler_config() const;
  // Where scheduler_config() comes from, for messages.
  std::string scheduler_config_origin() const;
  // The artifact's default image size (the first it was built for), and every size it holds.
  std::int64_t width() const;
  std::int64_t height() const;
  const std::vector<artifact::ImageSize>& sizes() const;

  // The symbols of the artifact's functions, sorted.
  std::vector<std::string> function_names() const;
  // Runs function `symbol` on inputs of its own signature filled with deterministic values; for
  // `websd profile` and benchmarks. Returns the wall seconds of the run.
  double run_function_once(const std::string& symbol);
  // The same in halves, for a caller that awaits the device in between (the WebAssembly runtime):
  // submit, then finish once the device has done the work (finish throws if it has not).
  void submit_function_once(const std::string& symbol);
  void finish_function(const std::string& symbol);
  // Where loading went so far (the cold start's parts before kernels run): shard reads and checks,
  // weight imports, executors made.
  struct LoadTimes {
    artifact::ShardLoadTimes shards;
    runtime::WeightLoadTimes weights;
  };
  LoadTimes load_times() const;
  // Times every launch of later calls into `profile` (nullptr stops).
  void set_profile(runtime::OpProfile* profile);
  // Adds the times of calls whose outputs were downloaded through the device (not waited on by
  // their executor) to the profile; the device must have finished them.
  void collect_profile();

 private:
  struct State;
  struct HeldBuffer;
  const runtime::BufferPtr& held(const DeviceTensor& tensor) const;
  DeviceTensor hold(Shape shape, runtime::BufferPtr buffer) const;
  // Submits the executor's function; its first output, copied into a new device tensor.
  DeviceTensor submit_for_output(runtime::Executor& executor);

  std::unique_ptr<State> state_;
};

}  // namespace websd::backends
