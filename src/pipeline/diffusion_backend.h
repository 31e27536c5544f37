// What the pipeline needs from an engine that runs the networks: text encoding and VAE encoding
// once per run on host tensors; UNet steps, VAE decoding and the image's conversion to RGBA on
// device tensors (device_tensor.h), so that per step only the scheduler's input and the
// prediction cross between host and device. The pipeline (tokenizer, schedulers, guidance, noise)
// depends only on this interface, never on the compiler: HostBackend (host_backend.h) adapts
// backends that compute on host tensors (the CPU graph executor, test fakes); compiled artifacts
// implement it on their device. host_calls.h calls it with host tensors (tests, benchmarks).
// Implementations are used from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/host_tensor.h"
#include "pipeline/device_tensor.h"

namespace websd {

struct ModelInfo {
  std::int64_t latent_channels = 4;
  std::int64_t vae_scale_factor = 8;    // image pixels per latent pixel
  double vae_scaling_factor = 0.18215;  // latents = encode(x) * this
  std::int64_t max_tokens = 77;
  // Latent height and width the UNet was trained at (its config's sample_size, an int or a pair); the
  // default image is (sample_height x vae_scale_factor) high and (sample_width x vae_scale_factor) wide.
  std::int64_t sample_height = 64;
  std::int64_t sample_width = 64;
  // Latent sides must be multiples of this (2^(levels - 1) for a UNet that halves the latents at each
  // level), so image sides must be multiples of vae_scale_factor * latent_size_multiple.
  std::int64_t latent_size_multiple = 1;
  std::string name;  // shown to users and written into PNG metadata
};

// The networks one generation run calls, with their inputs' shapes, known before the first call.
struct RunShapes {
  std::int64_t text_rows = 1;       // prompt rows the text encoder encodes at once: 2 with guidance
  std::int64_t tokens = 77;         // per row
  Shape latents;                    // [1, C, h, w]: the UNet's sample and the VAE decoder's input
  bool guided = false;              // the UNet runs on the batch (sample, sample): unet_guided
  std::optional<Shape> init_image;  // [1, 3, H, W]: the VAE encoder's input (img2img)
  // Set when the image is decoded in tiles (vae_decode_plan.h): the VAE decoder's input is then
  // this tile shape [1, C, th, tw], not `latents`.
  std::optional<Shape> decode_tile;
};
// What DiffusionBackend::vae_decode_fit says of a decoder input shape.
enum class DecodeFit {
  kFits,
  kTooLarge,   // more than the memory available
  kNoDecoder,  // the backend cannot decode this shape (an artifact holds decoders of fixed shapes)
};

// Told during a network call how much of it is done: (parts done, parts in the call), e.g. the
// launches of a compiled function. Called on the calling thread, many times per call: keep it cheap.
using CallProgress = std::function<void(std::size_t done, std::size_t total)>;

class DiffusionBackend {
 public:
  virtual ~DiffusionBackend() = default;

  virtual const ModelInfo& info() const = 0;

  // Refuses, before any network runs, a run whose networks will not fit in the memory available:
  // websd::Error naming the network, what it needs and what is available. A backend that cannot
  // tell accepts every run.
  virtual void check_memory(const RunShapes& run) { (void)run; }
  // Loads, before the run's first call, what its networks need on the device (executors made,
  // weights uploaded), where the backend keeps every network loaded anyway: a device that compiles
  // its kernels in the background (webgpu) then uploads meanwhile rather than after. Others load
  // each network at its first call, as this default does.
  virtual void load(const RunShapes& run) { (void)run; }
  // load() a part at a time: about `bytes` more of the weights (at least one), false while some
  // remain, so that a caller who must yield between device calls (a page, whose uploads go through
  // staging buffers the GPU hands back between yields) can spread it out; true once loaded.
  virtual bool load_part(const RunShapes& run, std::uint64_t bytes) {
    (void)bytes;
    load(run);
    return true;
  }
  // Whether the VAE decoder for `latents` [1, C, h, w] fits in the memory available now, as
  // check_memory would judge it, so that a decode too large for the machine can run in tiles
  // instead (vae_decode_plan.h). A backend that cannot tell says it fits, as this default does.
  virtual DecodeFit vae_decode_fit(const Shape& latents) {
    (void)latents;
    return DecodeFit::kFits;
  }
  // Reports progress within later calls to `progress` (empty: stop), so that a caller can show how
  // far a slow step has got. Backends that cannot tell ignore it, as this default does.
  virtual void set_call_progress(CallProgress progress) { (void)progress; }

  // Run once per generation run, on host tensors (their results are checked on the host):
  // ids: [batch, 77] token ids -> [batch, 77, hidden].
  virtual HostTensor encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) = 0;
  // image [1, 3, H, W] in [-1, 1] -> {mean, logvar} of the latent distribution.
  virtual std::pair<HostTensor, HostTensor> vae_encode(const HostTensor& image) = 0;
  // The same two, enqueued on the device and complete at TensorDownload::wait() (ready() says when
  // that would not block), for a caller that awaits the device between calls
  // (GenerationSession::submit_prepare). These defaults compute at once: backends on the host.
  virtual TensorDownload submit_encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) {
    return TensorDownload([result = encode_text(ids, batch)] { return result; });
  }
  virtual std::pair<TensorDownload, TensorDownload> submit_vae_encode(const HostTensor& image) {
    std::pair<HostTensor, HostTensor> encoded = vae_encode(image);
    return {TensorDownload([mean = std::move(encoded.first)] { return mean; }),
            TensorDownload([logvar = std::move(encoded.second)] { return logvar; })};
  }

  // Device tensors (device_tensor.h). upload copies a float32 host tensor to the device (it has
  // read the tensor when it returns: the caller may reuse or drop it at once); download enqueues
  // the copy back, complete at TensorDownload::wait().
  virtual DeviceTensor upload(const HostTensor& tensor) = 0;
  virtual TensorDownload download(const DeviceTensor& tensor) = 0;

  // Run per step and per image, device tensor in, device tensor out:
  // sample [batch, C, h, w], one timestep for all rows, context [batch, 77, hidden] -> prediction like sample.
  virtual DeviceTensor unet(const DeviceTensor& sample, double timestep, const DeviceTensor& context) = 0;
  // One step with classifier-free guidance: uncond + guidance_scale * (cond - uncond), where (uncond,
  // cond) is the UNet's prediction for the batch (sample, sample) with context rows (negative,
  // prompt), in the host's float32 order (pipeline/guidance.cpp); sample [1, C, h, w], context
  // [2, 77, hidden] -> [1, C, h, w]. A compiled backend runs it as one function on its device.
  virtual DeviceTensor unet_guided(const DeviceTensor& sample, double timestep, const DeviceTensor& context,
                                   double guidance_scale) = 0;
  // latents [1, C, h, w] (already divided by the scaling factor) -> image [1, 3, 8h, 8w] in about [-1, 1].
  virtual DeviceTensor vae_decode(const DeviceTensor& latents) = 0;
  // A decoded image [1, 3, H, W] -> [H, W, 4]: 255 * clamp(x / 2 + 0.5, 0, 1) per RGB channel, alpha
  // 255 (image_tensor.h's decoded_to_rgba, which host backends run), rounded to bytes by the caller.
  virtual DeviceTensor image_to_rgba(const DeviceTensor& image) = 0;
};

}  // namespace websd
