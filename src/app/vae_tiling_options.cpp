#include "app/vae_tiling_options.h"

#include "app/number_ranges.h"
#include "pipeline/generation_params.h"

namespace websd::app {

void add_vae_tiling_options(CLI::App& command, VaeTiling& tiling) {
  command
      .add_option_function<std::string>(
          "--vae-tiling", [&tiling](const std::string& name) { tiling.mode = *vae_tiling_mode_from_name(name); },
          "Decode the image in overlapping tiles: auto (when the whole decode would not fit in the memory available), "
          "on (whenever the image is larger than a tile), off (never; a decode that does not fit is refused)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->default_str(vae_tiling_mode_name(tiling.mode));
  command
      .add_option("--vae-tile-size", tiling.tile_size,
                  "Side of the square VAE tiles in pixels (tiles overlap by a quarter)")
      ->check(integer_range(kMinVaeTileSize, kMaxImageSide))
      ->check(integer_multiple(kVaeTileSizeStep))
      ->capture_default_str();
}

}  // namespace websd::app
