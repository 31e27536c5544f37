#include "core/host_tensor.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace websd {
namespace {

TEST(HostTensor, ShapeNumelAndText) {
  EXPECT_EQ(shape_numel({1, 4, 64, 64}), 16384);
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_to_string({2, 77, 768}), "[2,77,768]");
  EXPECT_THROW(shape_numel({-1, 3}), Error);
  EXPECT_THROW(shape_numel({1ll << 40, 1ll << 40}), Error);
}

TEST(HostTensor, ValuesMustMatchShape) {
  EXPECT_NO_THROW(HostTensor({2, 2}, {1, 2, 3, 4}));
  EXPECT_THROW(HostTensor({2, 2}, {1, 2, 3}), Error);
  EXPECT_EQ(HostTensor({3, 2}).data.size(), 6u);
}

}  // namespace
}  // namespace websd
