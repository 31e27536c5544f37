#include "pipeline/vae_decode_plan.h"

#include "core/error.h"

namespace websd {
namespace {

std::string size_text(std::int64_t width, std::int64_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

std::string tiles_text(const VaeTileGrid& grid) {
  return std::to_string(grid.count()) + " overlapping tiles of " +
         size_text(grid.tile_width * grid.scale, grid.tile_height * grid.scale) + " pixels";
}

}  // namespace

std::optional<VaeTilingMode> vae_tiling_mode_from_name(std::string_view name) {
  if (name == "auto") return VaeTilingMode::kAuto;
  if (name == "on") return VaeTilingMode::kOn;
  if (name == "off") return VaeTilingMode::kOff;
  return std::nullopt;
}

const char* vae_tiling_mode_name(VaeTilingMode mode) {
  switch (mode) {
    case VaeTilingMode::kAuto:
      return "auto";
    case VaeTilingMode::kOn:
      return "on";
    case VaeTilingMode::kOff:
      return "off";
  }
  return "auto";
}

void check_vae_tiling(const VaeTiling& tiling, const ModelInfo& info) {
  const std::int64_t step = 4 * info.vae_scale_factor;
  if (tiling.tile_size < step || tiling.tile_size % step != 0) {
    throw Error("pipeline", "VAE tile size " + std::to_string(tiling.tile_size) + " is not a positive multiple of " +
                                std::to_string(step) + " pixels (4 latent pixels, so that tiles overlap by a quarter)");
  }
}

VaeDecodePlan plan_vae_decode(DiffusionBackend& backend, const VaeTiling& tiling, const Shape& latents) {
  const ModelInfo& info = backend.info();
  check_vae_tiling(tiling, info);
  VaeDecodePlan plan;
  if (tiling.mode == VaeTilingMode::kOff) return plan;
  VaeTileGrid grid = make_vae_tile_grid(latents, tiling.tile_size / info.vae_scale_factor, info.vae_scale_factor);
  if (grid.count() == 1) return plan;  // one tile is the whole decode
  const std::string image = size_text(latents[3] * info.vae_scale_factor, latents[2] * info.vae_scale_factor);
  if (tiling.mode == VaeTilingMode::kOn) {
    plan.note = "decoding the " + image + " image in " + tiles_text(grid) + " (--vae-tiling on)";
  } else if (backend.vae_decode_fit(latents) != DecodeFit::kTooLarge) {
    return plan;
  } else {
    const std::string whole = "the VAE decode of the whole " + image + " image does not fit in the memory available";
    switch (backend.vae_decode_fit(grid.tile_shape())) {
      case DecodeFit::kFits:
        plan.note = whole + ": decoding it in " + tiles_text(grid) + " instead (--vae-tiling off would refuse the run)";
        break;
      case DecodeFit::kTooLarge:
        plan.note = whole + ", and neither do " + tiles_text(grid) + " (a smaller --vae-tile-size may)";
        return plan;
      case DecodeFit::kNoDecoder:
        plan.note = whole + ", and no decoder for " + tiles_text(grid) + " is at hand (" +
                    shape_to_string(grid.tile_shape()) + " latents; an artifact decodes the shapes it was built for)";
        return plan;
    }
  }
  plan.tiles = std::move(grid);
  return plan;
}

}  // namespace websd
