// Whether a run decodes its latents whole or in overlapping tiles (vae_tile_grid.h), as the user
// asked (--vae-tiling auto|on|off, --vae-tile-size) and as the memory available allows:
//   off   the whole decode, always (a decode that does not fit is refused by check_memory, as before)
//   on    tiles whenever the image is larger than one tile
//   auto  the whole decode when it fits (DiffusionBackend::vae_decode_fit), else tiles when one
//         tile's decode fits; else the whole decode, which check_memory then refuses with its figures
//         (and a note says why tiles could not help: too large too, or no decoder of their shape)
// A tiled image differs slightly from the whole decode, because the decoder's group norms see only
// their tile's statistics (README: "Tiled VAE decode" gives the measured bound). Thread-safe functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pipeline/diffusion_backend.h"
#include "pipeline/vae_tile_grid.h"

namespace websd {

enum class VaeTilingMode { kAuto, kOn, kOff };

struct VaeTiling {
  VaeTilingMode mode = VaeTilingMode::kAuto;
  std::int64_t tile_size = 512;  // side of the square tiles in image pixels (diffusers' 64 latent pixels)
};

// "auto", "on", "off" and back; nullopt for another name.
std::optional<VaeTilingMode> vae_tiling_mode_from_name(std::string_view name);
const char* vae_tiling_mode_name(VaeTilingMode mode);

// Throws websd::Error("pipeline") unless tile_size is a positive multiple of 4 x vae_scale_factor
// (a whole number of latent pixels that tiles can overlap by a quarter of).
void check_vae_tiling(const VaeTiling& tiling, const ModelInfo& info);

struct VaeDecodePlan {
  std::optional<VaeTileGrid> tiles;  // empty: the whole decode
  std::string note;                  // one line for the user when tiles were chosen (or could not help)
};

// Decides how latents of `latents` [1, C, h, w] are decoded (see the top of this file); asks the
// backend about memory only in auto mode, and only for a decode of more than one tile.
VaeDecodePlan plan_vae_decode(DiffusionBackend& backend, const VaeTiling& tiling, const Shape& latents);

}  // namespace websd
