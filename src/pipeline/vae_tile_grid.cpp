#include "pipeline/vae_tile_grid.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace websd {

Shape VaeTileGrid::tile_shape() const { return {latents.at(0), latents.at(1), tile_height, tile_width}; }

std::vector<std::int64_t> vae_tile_starts(std::int64_t extent, std::int64_t tile, std::int64_t stride) {
  if (extent <= tile) return {0};
  std::vector<std::int64_t> starts;
  for (std::int64_t start = 0; start + tile < extent; start += stride) starts.push_back(start);
  starts.push_back(extent - tile);  // the last tile ends at the edge, overlapping its neighbour more
  return starts;
}

VaeTileGrid make_vae_tile_grid(const Shape& latents, std::int64_t tile, std::int64_t scale) {
  if (latents.size() != 4 || latents[0] != 1 || latents[2] < 1 || latents[3] < 1) {
    throw Error("pipeline", "a tiled VAE decode takes latents [1, C, h, w], not " + shape_to_string(latents));
  }
  if (tile < 4 || tile % 4 != 0 || scale < 1) {
    throw Error("pipeline",
                "VAE tiles of " + std::to_string(tile) +
                    " latent pixels: the side must be a positive multiple of 4 (tiles overlap by a quarter)");
  }
  const std::int64_t overlap = tile / 4;
  VaeTileGrid grid;
  grid.latents = latents;
  grid.scale = scale;
  grid.tile_height = std::min(tile, latents[2]);
  grid.tile_width = std::min(tile, latents[3]);
  grid.blend = overlap * scale;
  grid.rows = vae_tile_starts(latents[2], tile, tile - overlap);
  grid.columns = vae_tile_starts(latents[3], tile, tile - overlap);
  return grid;
}

std::vector<std::vector<float>> vae_tile_axis_weights(const std::vector<std::int64_t>& starts, std::int64_t tile,
                                                      std::int64_t scale, std::int64_t blend) {
  const std::int64_t size = tile * scale;
  std::vector<std::vector<float>> weights(starts.size(), std::vector<float>(static_cast<std::size_t>(size), 1.0f));
  for (std::size_t t = 0; t + 1 < starts.size(); ++t) {
    const std::int64_t start = starts[t] * scale, next = starts[t + 1] * scale;
    const std::int64_t overlap = start + size - next;
    const std::int64_t band = std::min(blend, overlap);
    const std::int64_t band_start = next + (overlap - band) / 2;
    // Over the overlap tile t hands over to tile t + 1: all t before the band, all t + 1 after it.
    // Multiplying (not assigning) keeps what an overlap with another neighbour set.
    for (std::int64_t p = next; p < start + size; ++p) {
      const float rising = p < band_start ? 0.0f
                           : p >= band_start + band
                               ? 1.0f
                               : (static_cast<float>(p - band_start) + 0.5f) / static_cast<float>(band);
      weights[t + 1][static_cast<std::size_t>(p - next)] *= rising;
      weights[t][static_cast<std::size_t>(p - start)] *= 1.0f - rising;
    }
  }
  return weights;
}

HostTensor vae_latent_tile(const HostTensor& latents, const VaeTileGrid& grid, std::size_t index) {
  if (latents.shape != grid.latents || latents.numel() != shape_numel(latents.shape)) {
    throw Error("pipeline", "latents " + shape_to_string(latents.shape) + " do not match the VAE tile grid's " +
                                shape_to_string(grid.latents));
  }
  const std::int64_t channels = grid.latents[1], height = grid.latents[2], width = grid.latents[3];
  const std::int64_t y0 = grid.tile_y(index), x0 = grid.tile_x(index);
  HostTensor tile(grid.tile_shape());
  auto out = tile.data.begin();
  for (std::int64_t c = 0; c < channels; ++c) {
    for (std::int64_t y = y0; y < y0 + grid.tile_height; ++y) {
      const auto row = latents.data.begin() + (c * height + y) * width + x0;
      out = std::copy(row, row + grid.tile_width, out);
    }
  }
  return tile;
}

HostTensor blend_vae_tiles(const VaeTileGrid& grid, const std::vector<HostTensor>& tiles) {
  if (tiles.size() != grid.count()) {
    throw Error("pipeline", "blending " + std::to_string(tiles.size()) + " decoded tiles; the VAE tile grid has " +
                                std::to_string(grid.count()));
  }
  const std::int64_t tile_h = grid.tile_height * grid.scale, tile_w = grid.tile_width * grid.scale;
  const std::int64_t channels = tiles.front().shape.size() == 4 ? tiles.front().shape[1] : 0;
  const Shape expected = {1, channels, tile_h, tile_w};
  for (const HostTensor& tile : tiles) {
    if (channels < 1 || tile.shape != expected || tile.numel() != shape_numel(expected)) {
      throw Error("pipeline", "the VAE decoder returned a tile of shape " + shape_to_string(tile.shape) +
                                  ", expected " + shape_to_string(expected));
    }
  }
  const std::int64_t height = grid.latents[2] * grid.scale, width = grid.latents[3] * grid.scale;
  const auto row_weights = vae_tile_axis_weights(grid.rows, grid.tile_height, grid.scale, grid.blend);
  const auto column_weights = vae_tile_axis_weights(grid.columns, grid.tile_width, grid.scale, grid.blend);
  HostTensor image({1, channels, height, width});
  for (std::size_t index = 0; index < tiles.size(); ++index) {
    const std::vector<float>& wy = row_weights[index / grid.columns.size()];
    const std::vector<float>& wx = column_weights[index % grid.columns.size()];
    const std::int64_t y0 = grid.tile_y(index) * grid.scale, x0 = grid.tile_x(index) * grid.scale;
    for (std::int64_t c = 0; c < channels; ++c) {
      for (std::int64_t y = 0; y < tile_h; ++y) {
        const float row_weight = wy[static_cast<std::size_t>(y)];
        if (row_weight == 0.0f) continue;
        const float* in = tiles[index].data.data() + (c * tile_h + y) * tile_w;
        float* out = image.data.data() + (c * height + y0 + y) * width + x0;
        for (std::int64_t x = 0; x < tile_w; ++x) out[x] += in[x] * (row_weight * wx[static_cast<std::size_t>(x)]);
      }
    }
  }
  return image;
}

}  // namespace websd
