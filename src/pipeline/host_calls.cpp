#include "pipeline/host_calls.h"

namespace websd {

HostTensor call_unet(DiffusionBackend& backend, const HostTensor& sample, double timestep, const HostTensor& context) {
  return backend.download(backend.unet(backend.upload(sample), timestep, backend.upload(context))).wait();
}

HostTensor call_unet_guided(DiffusionBackend& backend, const HostTensor& sample, double timestep,
                            const HostTensor& context, double guidance_scale) {
  return backend
      .download(backend.unet_guided(backend.upload(sample), timestep, backend.upload(context), guidance_scale))
      .wait();
}

HostTensor call_vae_decode(DiffusionBackend& backend, const HostTensor& latents) {
  return backend.download(backend.vae_decode(backend.upload(latents))).wait();
}

HostTensor call_image_to_rgba(DiffusionBackend& backend, const HostTensor& image) {
  return backend.download(backend.image_to_rgba(backend.upload(image))).wait();
}

}  // namespace websd
