// The VAE's image conversions: layout, x/255*2-1, 255*(x/2+0.5).clamp(0,1) as RGBA, round half to even.
#include "pipeline/image_tensor.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/error.h"

namespace websd {
namespace {

TEST(ImageTensor, EightBitImageBecomesChannelPlanarSignedTensor) {
  const RgbImage image{2, 1, {0, 255, 51, 102, 153, 204}};
  const HostTensor tensor = image_to_signed_tensor(image);
  EXPECT_EQ(tensor.shape, (Shape{1, 3, 1, 2}));
  EXPECT_FLOAT_EQ(tensor.data[0], -1.0f);                            // R of pixel 0
  EXPECT_FLOAT_EQ(tensor.data[1], 2.0f * (102.0f / 255.0f) - 1.0f);  // R of pixel 1
  EXPECT_FLOAT_EQ(tensor.data[2], 1.0f);                             // G of pixel 0
  EXPECT_FLOAT_EQ(tensor.data[5], 2.0f * (204.0f / 255.0f) - 1.0f);  // B of pixel 1
}

TEST(ImageTensor, DecodedImageIsShiftedClampedAndInterleavedWithOpaqueAlpha) {
  // planes R = (-3, 0), G = (0.5, 1), B = (2, -1)
  const HostTensor decoded({1, 3, 1, 2}, {-3.0f, 0.0f, 0.5f, 1.0f, 2.0f, -1.0f});
  const HostTensor rgba = decoded_to_rgba(decoded);
  EXPECT_EQ(rgba.shape, (Shape{1, 2, 4}));
  EXPECT_EQ(rgba.data, (std::vector<float>{0.0f, 0.75f * 255.0f, 255.0f, 255.0f, 127.5f, 255.0f, 0.0f, 255.0f}));
}

TEST(ImageTensor, QuantizesWithTiesToEvenAsNumpyRound) {
  // 127.5 -> 128 (the even neighbour); 63.75 -> 64; out of range clamps.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const HostTensor rgba({1, 2, 4}, {127.5f, 255.0f, nan, 255.0f, -4.0f, 63.75f, 300.0f, 255.0f});
  const RgbImage image = rgba_to_image(rgba);
  EXPECT_EQ(image.width, 2);
  EXPECT_EQ(image.height, 1);
  // pixel 0 = (R 127.5, G 255, B NaN), pixel 1 = (R -4, G 63.75, B 300)
  EXPECT_EQ(image.pixels, (std::vector<std::uint8_t>{128, 255, 0, 0, 64, 255}));
}

TEST(ImageTensor, RoundTripsEveryByte) {
  RgbImage image{256, 1, {}};
  for (int i = 0; i < 256 * 3; ++i) image.pixels.push_back(static_cast<std::uint8_t>(i / 3));
  const RgbImage back = rgba_to_image(decoded_to_rgba(image_to_signed_tensor(image)));
  EXPECT_EQ(back.pixels, image.pixels);
}

TEST(ImageTensor, RejectsNonImageShapes) {
  EXPECT_THROW(decoded_to_rgba(HostTensor({1, 4, 2, 2})), Error);
  EXPECT_THROW(rgba_to_image(HostTensor({2, 3, 2})), Error);
  EXPECT_THROW(rgba_to_image(HostTensor({2, 3, 3})), Error);
}

}  // namespace
}  // namespace websd
