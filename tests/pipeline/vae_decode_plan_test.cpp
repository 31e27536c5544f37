// Whole or tiled VAE decode (pipeline/vae_decode_plan.h): what each --vae-tiling mode chooses, the
// automatic choice following the backend's memory check, and a generation session that decodes in
// tiles: memory checked for the tile, one decoder call per tile, progress per tile, one note line.
#include "pipeline/vae_decode_plan.h"

#include <gtest/gtest.h>

#include "pipeline/generation_session.h"
#include "pipeline_test_support.h"
#include "support/error_text.h"

namespace websd {
namespace {

using test::FakeBackend;

// 304x232 images: latents 38 wide, 29 high; with 128-pixel tiles (16 latent pixels) a 3x3 grid
// whose last row and column are moved back to the edge.
const Shape kLatents = {1, 4, 29, 38};
const Shape kTile = {1, 4, 16, 16};

VaeTiling tiling(VaeTilingMode mode) { return {mode, 128}; }

DecodeFit fits_only_the_tile(const Shape& latents) {
  return latents == kTile ? DecodeFit::kFits : DecodeFit::kTooLarge;
}

TEST(VaeDecodePlan, OffDecodesWholeAndOnInTiles) {
  FakeBackend backend;
  const VaeDecodePlan off = plan_vae_decode(backend, tiling(VaeTilingMode::kOff), kLatents);
  EXPECT_FALSE(off.tiles);
  EXPECT_EQ(off.note, "");
  const VaeDecodePlan on = plan_vae_decode(backend, tiling(VaeTilingMode::kOn), kLatents);
  ASSERT_TRUE(on.tiles);
  EXPECT_EQ(on.tiles->count(), 9u);
  EXPECT_EQ(on.note, "decoding the 304x232 image in 9 overlapping tiles of 128x128 pixels (--vae-tiling on)");
  EXPECT_TRUE(backend.fits_questions.empty()) << "on and off do not depend on memory";
}

TEST(VaeDecodePlan, AnImageThatIsOneTileIsDecodedWhole) {
  FakeBackend backend;
  EXPECT_FALSE(plan_vae_decode(backend, tiling(VaeTilingMode::kOn), {1, 4, 16, 16}).tiles);
  EXPECT_FALSE(plan_vae_decode(backend, {VaeTilingMode::kOn, 512}, kLatents).tiles);
}

TEST(VaeDecodePlan, AutoTilesOnlyWhenTheWholeDecodeDoesNotFitAndATileDoes) {
  FakeBackend fits;
  const VaeDecodePlan whole = plan_vae_decode(fits, tiling(VaeTilingMode::kAuto), kLatents);
  EXPECT_FALSE(whole.tiles);
  EXPECT_EQ(whole.note, "");
  EXPECT_EQ(fits.fits_questions, (std::vector<Shape>{kLatents}));

  FakeBackend tight;
  tight.decode_fit = fits_only_the_tile;
  const VaeDecodePlan tiled = plan_vae_decode(tight, tiling(VaeTilingMode::kAuto), kLatents);
  ASSERT_TRUE(tiled.tiles);
  EXPECT_EQ(tiled.tiles->tile_shape(), kTile);
  EXPECT_EQ(tiled.note,
            "the VAE decode of the whole 304x232 image does not fit in the memory available: decoding it in 9 "
            "overlapping tiles of 128x128 pixels instead (--vae-tiling off would refuse the run)");
  EXPECT_EQ(tight.fits_questions, (std::vector<Shape>{kLatents, kTile}));

  FakeBackend full;
  full.decode_fit = [](const Shape&) { return DecodeFit::kTooLarge; };
  const VaeDecodePlan neither = plan_vae_decode(full, tiling(VaeTilingMode::kAuto), kLatents);
  EXPECT_FALSE(neither.tiles) << "the whole decode, which check_memory then refuses with its figures";
  EXPECT_NE(neither.note.find("neither do 9 overlapping tiles"), std::string::npos) << neither.note;

  FakeBackend fixed;  // as an artifact built for one size
  fixed.decode_fit = [](const Shape& latents) {
    return latents == kLatents ? DecodeFit::kTooLarge : DecodeFit::kNoDecoder;
  };
  const VaeDecodePlan no_decoder = plan_vae_decode(fixed, tiling(VaeTilingMode::kAuto), kLatents);
  EXPECT_FALSE(no_decoder.tiles);
  EXPECT_NE(
      no_decoder.note.find("and no decoder for 9 overlapping tiles of 128x128 pixels is at hand ([1,4,16,16] latents"),
      std::string::npos)
      << no_decoder.note;
}

TEST(VaeDecodePlan, ModeNamesAndTileSizes) {
  for (const VaeTilingMode mode : {VaeTilingMode::kAuto, VaeTilingMode::kOn, VaeTilingMode::kOff}) {
    EXPECT_EQ(vae_tiling_mode_from_name(vae_tiling_mode_name(mode)), mode);
  }
  EXPECT_FALSE(vae_tiling_mode_from_name("yes"));
  FakeBackend backend;
  for (const std::int64_t size : {0, 16, 100, -32}) {
    EXPECT_NE(test::error_of([&] {
                plan_vae_decode(backend, {VaeTilingMode::kAuto, size}, kLatents);
              }).find("VAE tile size " + std::to_string(size) + " is not a positive multiple of 32 pixels"),
              std::string::npos)
        << size;
  }
}

GenerationRequest tiled_request(VaeTilingMode mode) {
  GenerationRequest request = test::small_request(2);
  request.params.width = 304;
  request.params.height = 232;
  request.vae_tiling = tiling(mode);
  return request;
}

TEST(VaeDecodePlan, ASessionDecodesInTilesWhenTheWholeDecodeDoesNotFit) {
  FakeBackend whole_backend;
  const std::vector<GeneratedImage> whole =
      test::run_pipeline(whole_backend, tiled_request(VaeTilingMode::kOff), "ddim");
  ASSERT_EQ(whole_backend.memory_checks.size(), 1u);
  EXPECT_FALSE(whole_backend.memory_checks[0].decode_tile);

  FakeBackend backend;
  backend.decode_fit = fits_only_the_tile;
  std::vector<std::string> events;
  const std::vector<GeneratedImage> tiled =
      test::run_pipeline(backend, tiled_request(VaeTilingMode::kAuto), "ddim", [&](const ProgressEvent& event) {
        if (!event.note.empty()) events.push_back("note");
        if (event.note.empty() && event.stage.starts_with("decode")) {
          events.push_back(event.stage + " " + std::to_string(event.step) + "/" + std::to_string(event.total_steps));
        }
      });
  ASSERT_EQ(backend.memory_checks.size(), 1u);
  EXPECT_EQ(backend.memory_checks[0].latents, kLatents);
  EXPECT_EQ(backend.memory_checks[0].decode_tile, kTile) << "the memory check is for the decode that runs";
  ASSERT_EQ(backend.decode_calls.size(), 9u);
  for (const HostTensor& call : backend.decode_calls) EXPECT_EQ(call.shape, kTile);
  std::vector<std::string> expected = {"note"};
  for (int step = 0; step <= 9; ++step) expected.push_back("decode tiles " + std::to_string(step) + "/9");
  EXPECT_EQ(events, expected);
  // The fake decoder is local, so the tiles blend into the whole decode's image.
  ASSERT_EQ(tiled.size(), 1u);
  ASSERT_EQ(tiled[0].rgba.shape, whole[0].rgba.shape);
  for (std::size_t i = 0; i < whole[0].rgba.data.size(); ++i) {
    ASSERT_NEAR(tiled[0].rgba.data[i], whole[0].rgba.data[i], 1e-3) << i;
  }
}

TEST(VaeDecodePlan, AWholeDecodeThatNoLongerFitsWhenItsTurnComesRunsInTiles) {
  // The whole decode fits when the run is planned, not when the image is decoded (the process
  // grew in between): auto mode asks again before decoding and takes tiles.
  FakeBackend backend;
  backend.decode_fit = [&backend](const Shape& latents) {
    const bool planning = backend.fits_questions.size() == 1;
    return planning || latents == kTile ? DecodeFit::kFits : DecodeFit::kTooLarge;
  };
  std::vector<std::string> notes;
  const std::vector<GeneratedImage> images =
      test::run_pipeline(backend, tiled_request(VaeTilingMode::kAuto), "ddim", [&](const ProgressEvent& event) {
        if (!event.note.empty()) notes.push_back(event.stage + ": " + event.note);
      });
  ASSERT_EQ(backend.memory_checks.size(), 1u);
  EXPECT_FALSE(backend.memory_checks[0].decode_tile) << "planned as a whole decode";
  ASSERT_EQ(backend.decode_calls.size(), 9u);
  for (const HostTensor& call : backend.decode_calls) EXPECT_EQ(call.shape, kTile);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("does not fit in the memory available: decoding it in 9 overlapping tiles"),
            std::string::npos)
      << notes[0];
  ASSERT_EQ(images.size(), 1u);

  // Off mode never asks again: the whole decode runs (and a real backend's check refuses it).
  FakeBackend off;
  off.decode_fit = [](const Shape&) { return DecodeFit::kTooLarge; };
  test::run_pipeline(off, tiled_request(VaeTilingMode::kOff), "ddim");
  EXPECT_TRUE(off.fits_questions.empty());
  ASSERT_EQ(off.decode_calls.size(), 1u);
  EXPECT_EQ(off.decode_calls[0].shape, kLatents);
}

}  // namespace
}  // namespace websd
