// The VAE's image conversions: layout, x/255*2-1, (x/2+0.5).clamp(0,1), round half to even.
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

TEST(ImageTensor, DecodedImageIsShiftedAndClamped) {
  const HostTensor decoded({1, 3, 1, 2}, {-3.0f, 0.0f, 0.5f, 1.0f, 2.0f, -1.0f});
  const HostTensor unit = decoded_to_unit_tensor(decoded);
  EXPECT_EQ(unit.data, (std::vector<float>{0.0f, 0.5f, 0.75f, 1.0f, 1.0f, 0.0f}));
}

TEST(ImageTensor, QuantizesWithTiesToEvenAsNumpyRound) {
  // 0.5 * 255 = 127.5 exactly -> 128 (the even neighbour); 0.25 * 255 = 63.75 -> 64.
  const HostTensor unit({1, 3, 1, 2}, {0.5f, 0.0f, 1.0f, 0.25f, std::numeric_limits<float>::quiet_NaN(), 0.999f});
  const RgbImage image = unit_tensor_to_image(unit);
  EXPECT_EQ(image.width, 2);
  EXPECT_EQ(image.height, 1);
  // pixel 0 = (R 0.5, G 1.0, B NaN), pixel 1 = (R 0.0, G 0.25, B 0.999)
  EXPECT_EQ(image.pixels, (std::vector<std::uint8_t>{128, 255, 0, 0, 64, 255}));
}

TEST(ImageTensor, RoundTripsEveryByte) {
  RgbImage image{256, 1, {}};
  for (int i = 0; i < 256 * 3; ++i) image.pixels.push_back(static_cast<std::uint8_t>(i / 3));
  const RgbImage back = unit_tensor_to_image(decoded_to_unit_tensor(image_to_signed_tensor(image)));
  EXPECT_EQ(back.pixels, image.pixels);
}

TEST(ImageTensor, RejectsNonImageShapes) {
  EXPECT_THROW(decoded_to_unit_tensor(HostTensor({1, 4, 2, 2})), Error);
  EXPECT_THROW(unit_tensor_to_image(HostTensor({2, 3, 2, 2})), Error);
}

}  // namespace
}  // namespace websd
