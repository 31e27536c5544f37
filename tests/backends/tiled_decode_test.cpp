// A tiled VAE decode (pipeline/vae_tile_grid.h) on the fixture model's real decoder, against the
// whole decode at a size where both fit: 304x232 pixels (latents 38x29) in 128x128 tiles, a 3x3
// grid that overlaps in both directions and whose last row and column are moved back to the edge.
// The decoder's group norms and its mid-block attention see one tile instead of the whole image,
// so the two differ; the bounds below are what this test measured (it prints the figures), with a
// margin, and are the ones README.md ("Tiled VAE decode") documents. Also: the artifact backend
// decodes tiles with its decoder of the tiles' shape, and names the shapes it holds when it has none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backend_test_support.h"
#include "compiler/build_artifact.h"
#include "pipeline/host_calls.h"
#include "pipeline/random/torch_generator.h"
#include "pipeline/vae_decode_plan.h"
#include "pipeline/vae_tile_grid.h"
#include "support/error_text.h"
#include "support/fixtures.h"
#include "targets/cpu/codegen/cpu_target.h"

namespace websd {
namespace {

// On the 0..1 image scale (clamp(x / 2 + 0.5, 0, 1), what a PNG stores times 255).
struct ImageDifference {
  double max_abs = 0;
  double mean_abs = 0;
  double psnr_db = 0;
};

ImageDifference image_difference(const HostTensor& tiled, const HostTensor& whole) {
  const auto unit = [](float x) { return std::clamp(static_cast<double>(x) / 2 + 0.5, 0.0, 1.0); };
  ImageDifference difference;
  double squares = 0;
  for (std::size_t i = 0; i < whole.data.size(); ++i) {
    const double d = std::abs(unit(tiled.data[i]) - unit(whole.data[i]));
    difference.max_abs = std::max(difference.max_abs, d);
    difference.mean_abs += d;
    squares += d * d;
  }
  const auto count = static_cast<double>(whole.data.size());
  difference.mean_abs /= count;
  difference.psnr_db = 10 * std::log10(1.0 / std::max(squares / count, 1e-30));
  return difference;
}

const Shape kLatents = {1, 4, 29, 38};

// Measured by this test on 2026-12-05 (x86-64, oneDNN 2.6), seeds 1, 2, 3: max abs 0.783, 0.975,
// 0.709; mean abs 0.0622, 0.0612, 0.0585; PSNR 20.9, 20.9, 21.6 dB. The bounds leave a small margin.
// A random decoder is a pessimistic case: its group norms' statistics differ from tile to tile far
// more than a trained decoder's over natural images, and these tiles are small (16 latent pixels).
constexpr double kMaxAbsBound = 0.995;
constexpr double kMeanAbsBound = 0.07;
constexpr double kPsnrBound = 20.0;

VaeTileGrid grid_of_128_pixel_tiles() { return make_vae_tile_grid(kLatents, 16, 8); }

TEST(TiledDecode, MatchesTheWholeDecodeWithinTheDocumentedBound) {
  const VaeTileGrid grid = grid_of_128_pixel_tiles();
  ASSERT_EQ(grid.rows, (std::vector<std::int64_t>{0, 12, 13}));
  ASSERT_EQ(grid.columns, (std::vector<std::int64_t>{0, 12, 22}));
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const HostTensor latents = TorchGenerator(seed).randn(kLatents);
    const HostTensor whole = call_vae_decode(test::tiny_backend(), latents);
    const HostTensor tiled = call_vae_decode_tiled(test::tiny_backend(), latents, grid);
    ASSERT_EQ(tiled.shape, whole.shape);
    const ImageDifference difference = image_difference(tiled, whole);
    std::printf("tiled vs whole decode, seed %llu: max abs %.4f, mean abs %.5f, PSNR %.1f dB\n",
                static_cast<unsigned long long>(seed), difference.max_abs, difference.mean_abs, difference.psnr_db);
    EXPECT_LT(difference.max_abs, kMaxAbsBound);
    EXPECT_LT(difference.mean_abs, kMeanAbsBound);
    EXPECT_GT(difference.psnr_db, kPsnrBound);
  }
}

// The fixture artifact is built for 128x128 images: its vae_decode takes [1,4,16,16], the tiles' shape.
TEST(TiledDecode, TheArtifactDecodesTilesWithItsDecoderOfTheirShape) {
  const HostTensor latents = TorchGenerator(1).randn(kLatents);
  const VaeTileGrid grid = grid_of_128_pixel_tiles();
  const HostTensor compiled = call_vae_decode_tiled(test::tiny_artifact_backend(), latents, grid);
  const HostTensor host = call_vae_decode_tiled(test::tiny_backend(), latents, grid);
  ASSERT_EQ(compiled.shape, host.shape);
  EXPECT_LT(test::relative_l2(compiled.data, host.data), 1e-5);
  EXPECT_EQ(test::tiny_artifact_backend().vae_decode_fit(grid.tile_shape()), DecodeFit::kFits);
  EXPECT_EQ(test::tiny_backend().vae_decode_fit(kLatents), DecodeFit::kFits);
}

TEST(TiledDecode, AnArtifactWithoutADecoderOfTheTilesShapeNamesTheShapesItHolds) {
  backends::ArtifactBackend& backend = test::tiny_artifact_backend();
  EXPECT_EQ(backend.vae_decode_fit({1, 4, 8, 8}), DecodeFit::kNoDecoder);
  const std::string message = test::error_of([&] { call_vae_decode(backend, HostTensor({1, 4, 8, 8})); });
  EXPECT_NE(message.find("has no VAE decoder for latents [1,4,8,8]; it holds vae_decode [1,4,16,16]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("choose a --vae-tile-size whose tiles it holds"), std::string::npos) << message;
}

// An artifact built for an image larger than one default tile (512 pixels) also holds a decoder of
// the tile's shape (vae_decode_tile), so that --vae-tiling works on it with the default tiles.
TEST(TiledDecode, AnArtifactLargerThanOneTileHoldsTheDefaultTilesDecoder) {
  compiler::BuildOptions options;
  options.checkpoint = std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(test::tiny_model_dir()));
  options.out = test::make_temp_dir("tile-decoder") + "/wide.art";
  options.sizes = {{576, 512}};  // latents 64 x 72: tiles of 64 x 64
  compiler::build_artifact(options, compiler::cpu_target());
  backends::ArtifactBackend artifact(options.out);
  const Shape latents_shape{1, 4, 64, 72};
  const VaeTileGrid grid = make_vae_tile_grid(latents_shape, VaeTiling{}.tile_size / 8, 8);
  EXPECT_EQ(grid.tile_shape(), (Shape{1, 4, 64, 64}));
  EXPECT_EQ(artifact.vae_decode_fit(grid.tile_shape()), DecodeFit::kFits);
  const HostTensor latents = TorchGenerator(4).randn(latents_shape);
  const HostTensor compiled = call_vae_decode_tiled(artifact, latents, grid);
  const HostTensor host = call_vae_decode_tiled(test::tiny_backend(), latents, grid);
  ASSERT_EQ(compiled.shape, (Shape{1, 3, 512, 576}));
  EXPECT_LT(test::relative_l2(compiled.data, host.data), 1e-5);
}

}  // namespace
}  // namespace websd
