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

HostTensor call_vae_decode_tiled(DiffusionBackend& backend, const HostTensor& latents, const VaeTileGrid& grid) {
  std::vector<HostTensor> tiles;
  for (std::size_t index = 0; index < grid.count(); ++index) {
    tiles.push_back(call_vae_decode(backend, vae_latent_tile(latents, grid, index)));
  }
  return blend_vae_tiles(grid, tiles);
}

}  // namespace websd
