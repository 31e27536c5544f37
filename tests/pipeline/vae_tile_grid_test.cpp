// The tiles of a tiled VAE decode (pipeline/vae_tile_grid.h): where they lie (a quarter overlap, the
// last tile moved back to the edge), blending weights that sum to 1 at every pixel for every size,
// a cross-fade confined to a band centred in each overlap, and a decoder that is local (the fake
// backend's) decoded in tiles giving exactly its whole decode: no seam.
#include "pipeline/vae_tile_grid.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fake_backend.h"
#include "pipeline/host_calls.h"
#include "pipeline/random/torch_generator.h"
#include "support/error_text.h"

namespace websd {
namespace {

TEST(VaeTileGrid, TilesStepByThreeQuartersAndTheLastEndsAtTheEdge) {
  EXPECT_EQ(vae_tile_starts(16, 16, 12), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(vae_tile_starts(10, 16, 12), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(vae_tile_starts(40, 16, 12), (std::vector<std::int64_t>{0, 12, 24}));  // whole steps
  EXPECT_EQ(vae_tile_starts(38, 16, 12), (std::vector<std::int64_t>{0, 12, 22}));  // last moved back by 2
  EXPECT_EQ(vae_tile_starts(29, 16, 12), (std::vector<std::int64_t>{0, 12, 13}));  // by 11, not a 1-pixel tile

  const VaeTileGrid grid = make_vae_tile_grid({1, 4, 29, 38}, 16, 8);
  EXPECT_EQ(grid.rows, (std::vector<std::int64_t>{0, 12, 13}));
  EXPECT_EQ(grid.columns, (std::vector<std::int64_t>{0, 12, 22}));
  EXPECT_EQ(grid.count(), 9u);
  EXPECT_EQ(grid.tile_shape(), (Shape{1, 4, 16, 16}));
  EXPECT_EQ(grid.blend, 32);  // a quarter tile, in image pixels
  EXPECT_EQ(grid.tile_y(5), 12);
  EXPECT_EQ(grid.tile_x(5), 22);

  const VaeTileGrid narrow = make_vae_tile_grid({1, 4, 10, 64}, 64, 8);  // a side shorter than a tile
  EXPECT_EQ(narrow.count(), 1u);
  EXPECT_EQ(narrow.tile_shape(), (Shape{1, 4, 10, 64}));
}

TEST(VaeTileGrid, RefusesTilesThatCannotOverlapByAQuarter) {
  for (const std::int64_t tile : {0, 2, 6, -8}) {
    EXPECT_NE(test::error_of([&] {
                make_vae_tile_grid({1, 4, 32, 32}, tile, 8);
              }).find("multiple of 4"),
              std::string::npos)
        << tile;
  }
  EXPECT_NE(test::error_of([&] { make_vae_tile_grid({2, 4, 32, 32}, 16, 8); }).find("[1, C, h, w]"), std::string::npos);
}

// Every size a decode accepts, up to several tiles, with every tile side a user can choose at
// small scale: at each image pixel the tiles' weights are in [0, 1] and sum to 1.
TEST(VaeTileGrid, BlendingWeightsSumToOneAtEveryPixel) {
  for (const std::int64_t scale : {1, 8}) {
    for (const std::int64_t tile : {4, 8, 16, 64}) {
      for (std::int64_t extent = 1; extent <= 4 * tile; ++extent) {
        const std::vector<std::int64_t> starts = vae_tile_starts(extent, tile, tile - tile / 4);
        const std::int64_t side = std::min(tile, extent);
        const auto weights = vae_tile_axis_weights(starts, side, scale, tile / 4 * scale);
        std::vector<double> sums(static_cast<std::size_t>(extent * scale), 0.0);
        for (std::size_t t = 0; t < starts.size(); ++t) {
          for (std::size_t i = 0; i < weights[t].size(); ++i) {
            ASSERT_GE(weights[t][i], 0.0f);
            ASSERT_LE(weights[t][i], 1.0f);
            sums.at(static_cast<std::size_t>(starts[t] * scale) + i) += weights[t][i];
          }
        }
        for (std::size_t p = 0; p < sums.size(); ++p) {
          ASSERT_NEAR(sums[p], 1.0, 1e-6)
              << "scale " << scale << ", tile " << tile << ", extent " << extent << ", pixel " << p;
        }
      }
    }
  }
}

// Tiles filled with their column index: outside the bands a pixel is its one tile's value; across
// a band (a quarter tile, centred in the overlap) the value rises steadily from one tile's to the next's.
TEST(VaeTileGrid, NeighboursCrossFadeInABandCentredInTheirOverlap) {
  const VaeTileGrid grid = make_vae_tile_grid({1, 4, 16, 38}, 16, 8);  // columns 0, 12, 22; 128-pixel tiles
  std::vector<HostTensor> tiles;
  for (std::size_t t = 0; t < grid.count(); ++t) {
    tiles.emplace_back(Shape{1, 3, 128, 128}, std::vector<float>(3 * 128 * 128, static_cast<float>(t)));
  }
  const HostTensor image = blend_vae_tiles(grid, tiles);
  ASSERT_EQ(image.shape, (Shape{1, 3, 128, 304}));
  const auto at = [&](std::int64_t x) { return image.data[static_cast<std::size_t>(2 * 128 * 304 + 77 * 304 + x)]; };
  // Tiles 0 and 1 overlap in pixels [96, 128): the whole overlap is the band.
  EXPECT_EQ(at(95), 0.0f);
  EXPECT_NEAR(at(96), 0.5f / 32, 1e-6);
  EXPECT_NEAR(at(127), 31.5f / 32, 1e-6);
  // Tiles 1 and 2 overlap in [176, 224) (the last tile moved back): the band is [184, 216).
  EXPECT_EQ(at(183), 1.0f);
  EXPECT_NEAR(at(184), 1.0f + 0.5f / 32, 1e-6);
  EXPECT_NEAR(at(215), 1.0f + 31.5f / 32, 1e-6);
  EXPECT_EQ(at(216), 2.0f);
  for (std::int64_t x = 1; x < 304; ++x) EXPECT_GE(at(x), at(x - 1)) << x;
}

TEST(VaeTileGrid, ALocalDecoderGivesTheWholeDecodeWithNoSeam) {
  test::FakeBackend backend;
  const HostTensor latents = TorchGenerator(3).randn({1, 4, 29, 38});
  const VaeTileGrid grid = make_vae_tile_grid(latents.shape, 16, 8);
  const HostTensor whole = call_vae_decode(backend, latents);
  backend.decode_calls.clear();
  const HostTensor tiled = call_vae_decode_tiled(backend, latents, grid);
  ASSERT_EQ(tiled.shape, whole.shape);
  ASSERT_EQ(backend.decode_calls.size(), 9u);
  for (const HostTensor& call : backend.decode_calls) EXPECT_EQ(call.shape, (Shape{1, 4, 16, 16}));
  for (std::size_t i = 0; i < whole.data.size(); ++i) ASSERT_NEAR(tiled.data[i], whole.data[i], 1e-6) << i;
}

TEST(VaeTileGrid, RefusesTilesThatDoNotMatchTheGrid) {
  const VaeTileGrid grid = make_vae_tile_grid({1, 4, 16, 38}, 16, 8);
  const std::vector<HostTensor> too_few(2, HostTensor({1, 3, 128, 128}));
  EXPECT_NE(test::error_of([&] { blend_vae_tiles(grid, too_few); }).find("blending 2 decoded tiles"),
            std::string::npos);
  const std::vector<HostTensor> misshapen(3, HostTensor({1, 3, 64, 128}));
  EXPECT_NE(test::error_of([&] { blend_vae_tiles(grid, misshapen); }).find("expected [1,3,128,128]"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
