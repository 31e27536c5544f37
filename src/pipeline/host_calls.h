// DiffusionBackend's device-tensor functions called with host tensors: upload, run, download and
// wait. For tests and benchmarks that compare backends value by value; the pipeline keeps its
// tensors on the device instead (generation_session.h).
#pragma once

#include "core/host_tensor.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/vae_tile_grid.h"

namespace websd {

HostTensor call_unet(DiffusionBackend& backend, const HostTensor& sample, double timestep, const HostTensor& context);
HostTensor call_unet_guided(DiffusionBackend& backend, const HostTensor& sample, double timestep,
                            const HostTensor& context, double guidance_scale);
HostTensor call_vae_decode(DiffusionBackend& backend, const HostTensor& latents);
HostTensor call_image_to_rgba(DiffusionBackend& backend, const HostTensor& image);
// The decode of `latents` in the tiles of `grid` (vae_tile_grid.h), one tile after another,
// blended on the host into the whole image [1, 3, H, W].
HostTensor call_vae_decode_tiled(DiffusionBackend& backend, const HostTensor& latents, const VaeTileGrid& grid);

}  // namespace websd
