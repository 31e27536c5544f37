// Where the tiles of a tiled VAE decode lie, and how their images are cross-faded into one.
//
// The latents [1, C, h, w] are cut into tiles of `tile` x `tile` latent pixels (a side shorter than
// `tile` is one tile of that side), neighbours overlapping by a quarter of a tile, as diffusers'
// AutoencoderKL.tiled_decode does (tile_latent_min_size 64, tile_overlap_factor 0.25). Tiles step by
// three quarters of a tile; where the side is not a whole number of steps the last tile is moved
// back to end at the edge (so every tile has the same shape, and no sliver of a tile is decoded),
// which makes its overlap with the tile before it larger than a quarter.
//
// Blending: between two neighbours along an axis, their images cross-fade linearly over a band of
// a quarter tile (in image pixels) centred in their overlap; outside the bands each image pixel
// comes from one tile. Along an axis the weights of all tiles sum to 1 at every pixel, and a
// tile's 2-D weight is the product of its row's and its column's, so they sum to 1 everywhere.
// Centring the band keeps the pixels that are used away from the tiles' edges, where a decoder
// that sees only its tile (zero padding, its own group-norm statistics) is least right. Bands
// never meet: the centres of consecutive overlaps are more than 3/8 of a tile apart (half of one
// full step plus half of the last, shorter one), the bands a quarter wide.
//
// Value types and pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/host_tensor.h"

namespace websd {

struct VaeTileGrid {
  Shape latents;                                 // [1, C, h, w]: the whole latents
  std::int64_t scale = 8;                        // image pixels per latent pixel
  std::int64_t tile_height = 0, tile_width = 0;  // in latent pixels: the tile side, or the image's if smaller
  std::int64_t blend = 0;                        // image pixels over which neighbours cross-fade
  std::vector<std::int64_t> rows, columns;       // latent start of each row and column of tiles

  std::size_t count() const { return rows.size() * columns.size(); }
  // [1, C, tile_height, tile_width]: the decoder's input for every tile.
  Shape tile_shape() const;
  // Latent start (y, x) of tile `index`, numbered row by row.
  std::int64_t tile_y(std::size_t index) const { return rows.at(index / columns.size()); }
  std::int64_t tile_x(std::size_t index) const { return columns.at(index % columns.size()); }
};

// Starts of tiles of `tile` along an axis of `extent` (both in latent pixels), `stride` apart, the
// last moved back to end at `extent`; {0} when extent <= tile. Requires 0 < stride <= tile.
std::vector<std::int64_t> vae_tile_starts(std::int64_t extent, std::int64_t tile, std::int64_t stride);

// The grid for `latents` [1, C, h, w] and square tiles of `tile` latent pixels, a positive multiple
// of 4 (the overlap is tile / 4). Throws websd::Error("pipeline") for another tile or shape.
VaeTileGrid make_vae_tile_grid(const Shape& latents, std::int64_t tile, std::int64_t scale);

// The blending weight of each tile along one axis, at each of its image pixels: weights[t][i] for
// pixel starts[t] * scale + i. Along the axis the weights at each image pixel sum to 1.
std::vector<std::vector<float>> vae_tile_axis_weights(const std::vector<std::int64_t>& starts, std::int64_t tile,
                                                      std::int64_t scale, std::int64_t blend);

// Tile `index` of the latents [1, C, h, w] that `grid` was made for: [1, C, tile_height, tile_width].
HostTensor vae_latent_tile(const HostTensor& latents, const VaeTileGrid& grid, std::size_t index);

// The decoded tiles [1, 3, tile_height * scale, tile_width * scale] (in grid order) cross-faded into
// the whole image [1, 3, h * scale, w * scale]. Throws websd::Error("pipeline") for a tile count
// or shape that does not match the grid.
HostTensor blend_vae_tiles(const VaeTileGrid& grid, const std::vector<HostTensor>& tiles);

}  // namespace websd
