// --vae-tiling auto|on|off and --vae-tile-size PIXELS, for every command that runs the VAE decoder
// (generate, bench): whether the image is decoded whole or in overlapping tiles
// (pipeline/vae_decode_plan.h). A bad value is one usage line naming the option and the value
// (exit 2). Not thread-safe (CLI setup).
#pragma once

#include <CLI/CLI.hpp>

#include "pipeline/vae_decode_plan.h"

namespace websd::app {

// Tile sides accepted: a multiple of this many pixels (4 latent pixels of an SD VAE, so that tiles
// overlap by a whole quarter), from kMinVaeTileSize to the largest image side.
inline constexpr std::int64_t kVaeTileSizeStep = 32;
inline constexpr std::int64_t kMinVaeTileSize = 64;

// Adds both options, writing into `tiling` (which keeps its defaults when they are not given).
void add_vae_tiling_options(CLI::App& command, VaeTiling& tiling);

}  // namespace websd::app
