// artifact/image_sizes.h: "WxH" parsing, the symbols of functions built for several sizes, and the
// role read back from a symbol.
#include "artifact/image_sizes.h"

#include <gtest/gtest.h>

namespace websd::artifact {
namespace {

TEST(ImageSizes, ParsesWidthByHeight) {
  EXPECT_EQ(parse_image_size("768x512"), (ImageSize{768, 512}));
  EXPECT_EQ(parse_image_size("64X96"), (ImageSize{64, 96}));
  for (const char* bad : {"", "512", "x512", "512x", "0x512", "512x-8", "512x512x2", " 512x512", "5l2x512", "a x b",
                          "99999999999999999999x8"}) {
    EXPECT_FALSE(parse_image_size(bad)) << bad;
  }
  EXPECT_EQ(image_sizes_text({{128, 128}, {96, 64}}), "128x128, 96x64");
}

TEST(ImageSizes, TheDefaultSizeKeepsThePlainSymbolsAndRolesReadBack) {
  const ImageSize first{512, 512};
  EXPECT_EQ(sized_symbol("unet_cfg", first, first), "unet_cfg");
  EXPECT_EQ(sized_symbol("unet_cfg", {768, 512}, first), "unet_cfg_768x512");
  EXPECT_EQ(symbol_role("unet_cfg_768x512"), "unet_cfg");
  EXPECT_EQ(symbol_role("unet_cfg"), "unet_cfg");
  EXPECT_EQ(symbol_role("unet_b1"), "unet_b1");
  EXPECT_EQ(symbol_role("unet_b1_64x96"), "unet_b1");
  EXPECT_EQ(symbol_role("vae_decode_tile"), "vae_decode_tile");
  EXPECT_EQ(symbol_role("clip"), "clip");
}

}  // namespace
}  // namespace websd::artifact
