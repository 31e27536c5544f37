// verify_component streams every weight through a small buffer and finds non-finite values.
#include "import/checkpoint_verify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "import/checkpoint_folder.h"
#include "import/diffusers_checkpoint.h"
#include "io/safetensors_writer.h"
#include "support/fixtures.h"

namespace websd {
namespace {

TEST(CheckpointVerify, FixtureIsFinite) {
  const auto checkpoint = DiffusersCheckpoint::open(test::fixture_path("tiny-sd15/model"));
  const auto& unet = checkpoint.component("unet");
  const auto report = verify_component(unet);
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.tensors_read, 494u);
  EXPECT_EQ(report.values_read, unet.stats().parameters);
}

TEST(CheckpointVerify, FindsNonFiniteValuesAcrossChunkBoundaries) {
  const auto dir = test::write_checkpoint_folder("ckpt-verify", {.dtype = DType::kF32});
  // 100 values with NaN at 0, +Inf at 37 and -Inf at 99: read through a 7-element buffer.
  std::vector<float> values(100, 0.5f);
  values[0] = std::numeric_limits<float>::quiet_NaN();
  values[37] = std::numeric_limits<float>::infinity();
  values[99] = -std::numeric_limits<float>::infinity();
  const HostTensor bad({10, 10}, values);
  const HostTensor good({4}, {1, 2, 3, 4});
  safetensors_write_f32(dir + "/vae/diffusion_pytorch_model.safetensors", {{"bad", &bad}, {"good", &good}});
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  for (const std::size_t buffer : {std::size_t{7}, std::size_t{1}, std::size_t{1} << 16}) {
    const auto report = verify_component(checkpoint.component("vae"), buffer);
    EXPECT_EQ(report.tensors_read, 2u);
    EXPECT_EQ(report.values_read, 104u);
    ASSERT_EQ(report.non_finite.size(), 1u);
    EXPECT_EQ(report.non_finite[0].name, "bad");
    EXPECT_EQ(report.non_finite[0].count, 3u);
    EXPECT_EQ(report.non_finite[0].first_index, 0u);
    EXPECT_EQ(report.non_finite[0].file, dir + "/vae/diffusion_pytorch_model.safetensors");
  }
  // Reading still works after the pages were released.
  EXPECT_EQ(checkpoint.component("vae").read_f32("good").data, good.data);
  EXPECT_THROW((void)verify_component(checkpoint.component("vae"), 0), Error);
}

TEST(CheckpointVerify, SkipsIntegerBuffers) {
  const auto dir = test::write_checkpoint_folder("ckpt-verify-int", {.position_ids = true});
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  const auto report = verify_component(checkpoint.component("text_encoder"));
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.tensors_read, 6u);
}

}  // namespace
}  // namespace websd
