// --vae-tiling and --vae-tile-size as a user meets them (issue 22): bad values refused in one usage
// line naming the option; in the default (auto) mode a decode that does not fit in the memory
// available runs in tiles, saying so in one line; --vae-tiling on tiles whenever the image is
// larger than a tile.
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "io/png_file.h"
#include "support/cli_checks.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

TEST(VaeTilingCli, BadValuesAreOneUsageLineNamingTheOption) {
  const std::string dir = make_temp_dir("tiling-options");
  const std::string out = dir + "/a.png";
  const std::vector<std::tuple<std::vector<std::string>, std::string>> cases = {
      {generate_args(fixture_model(), out, {"--vae-tiling", "yes"}), "--vae-tiling: yes not in {auto,on,off}"},
      {generate_args(fixture_model(), out, {"--vae-tile-size", "100"}), "--vae-tile-size: 100 is not a multiple of 32"},
      {generate_args(fixture_model(), out, {"--vae-tile-size", "32"}),
       "--vae-tile-size: 32 is not an integer from 64 to 4096"},
      {generate_args(fixture_model(), out, {"--vae-tile-size", "5e2"}),
       "--vae-tile-size: 5e2 is not an integer from 64 to 4096"},
      {{"bench", "--vae-tiling", "sometimes"}, "--vae-tiling: sometimes not in {auto,on,off}"},
      {{"bench", "--vae-tile-size", "8192"}, "--vae-tile-size: 8192 is not an integer from 64 to 4096"}};
  for (const auto& [args, message] : cases) expect_error(run_websd(args), {message}, 2);
  EXPECT_TRUE(fs::is_empty(dir));
}

// 768x768 on the fixture model, without guidance (a UNet batch of 1), 256-pixel tiles: each
// network's check counts a 0.5 GiB workspace margin, and a check before the run keeps 64 MiB more
// aside for what the networks running first leave behind (cpu_memory_check.h); beyond that the
// whole decode needs about 0.2 GiB (plus 0.15 GiB of Winograd workspace on an AVX-512 CPU), the
// UNet step and a tile's decode a few MiB. The process itself takes about 0.25 GiB of the address
// space once its kernel threads exist. Measured 2026-12-06 on a Zen 4, with oneDNN's AVX-512 paths
// and with ONEDNN_MAX_CPU_ISA=AVX2: tiles fit from about 840 (AVX2) and 865 MiB (AVX-512), the whole
// decode from about 1030 and 1185 MiB: 940 MiB lies between on both. Without the prepared-weight
// cache: a mapped cache file counts against the address space too, and its size depends on what
// other runs cached. About 25 s on a 2-core machine.
constexpr std::uint64_t kLimitBytes = 940ull << 20;

TEST(VaeTilingCli, AutoDecodesInTilesWhenTheWholeDecodeDoesNotFit) {
  const std::string out = make_temp_dir("tiling-auto") + "/a.png";
  const std::vector<std::string> args = generate_args(
      fixture_model(), out,
      {"--width", "768", "--height", "768", "--guidance", "1", "--vae-tile-size", "256", "--no-weight-cache"});
  const CommandResult result = run_websd_with_address_limit(args, kLimitBytes);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("websd: the VAE decode of the whole 768x768 image does not fit in the memory available: "
                            "decoding it in 16 overlapping tiles of 256x256 pixels instead"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("decode tiles 16/16"), std::string::npos) << result.err;
  const RgbImage image = png_read_rgb(out);
  EXPECT_EQ(image.width, 768);
  EXPECT_EQ(image.height, 768);

  std::vector<std::string> off = args;
  off.insert(off.end(), {"--vae-tiling", "off", "--force"});
  const CommandResult refused = run_websd_with_address_limit(off, kLimitBytes);
  expect_error(refused, {"vae_decode for inputs [1,4,96,96] needs about", "available (choose a smaller size)"});
  EXPECT_EQ(refused.err.find("denoise"), std::string::npos) << "refused before the first step:\n" << refused.err;
}

TEST(VaeTilingCli, OnDecodesInTilesWheneverTheImageIsLargerThanATile) {
  const std::string dir = make_temp_dir("tiling-on");
  const CommandResult tiled =
      run_websd(generate_args(fixture_model(), dir + "/tiled.png",
                              {"--width", "192", "--height", "128", "--vae-tiling", "on", "--vae-tile-size", "128"}));
  ASSERT_EQ(tiled.exit_code, 0) << tiled.err;
  EXPECT_NE(
      tiled.err.find("websd: decoding the 192x128 image in 2 overlapping tiles of 128x128 pixels (--vae-tiling on)"),
      std::string::npos)
      << tiled.err;
  const RgbImage image = png_read_rgb(dir + "/tiled.png");
  EXPECT_EQ(image.width, 192);
  EXPECT_EQ(image.height, 128);
}

}  // namespace
}  // namespace websd::test
