#include <gtest/gtest.h>

#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "support/fixtures.h"

namespace websd {
namespace {

TEST(Safetensors, WriteThenReadBackEveryFloatDtype) {
  const std::string path = test::make_temp_dir("st") + "/t.safetensors";
  const std::vector<std::uint16_t> halves = {f32_to_f16(1.5f), f32_to_f16(-2.0f)};
  const std::vector<std::uint16_t> brains = {f32_to_bf16(3.0f), f32_to_bf16(0.5f)};
  const std::vector<float> floats = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> ids = {49406, 320, 49407};
  safetensors_write(path,
                    {{"h", DType::kF16, {2}, std::as_bytes(std::span(halves))},
                     {"b", DType::kBF16, {1, 2}, std::as_bytes(std::span(brains))},
                     {"f", DType::kF32, {2, 3}, std::as_bytes(std::span(floats))},
                     {"ids", DType::kI64, {3}, std::as_bytes(std::span(ids))}},
                    {{"format", "pt"}});
  const SafetensorsFile file(path);
  EXPECT_EQ(file.entries().size(), 4u);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.read_f32("h").data, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(file.read_f32("b").data, (std::vector<float>{3.0f, 0.5f}));
  EXPECT_EQ(file.read_f32("f").shape, (Shape{2, 3}));
  EXPECT_EQ(file.read_f32("f").data, floats);
  EXPECT_EQ(file.read_i64("ids"), ids);
  EXPECT_EQ(file.find("missing"), nullptr);
}

// A header of 100 000 tensors (8 MB) parses in a linear pass (bench/io/safetensors_header_bench.cpp
// times it up to 1 M tensors); every entry is there, each with its own bytes.
TEST(Safetensors, ReadsAHeaderOfAHundredThousandTensors) {
  const std::string path = test::make_temp_dir("st-many") + "/many.safetensors";
  constexpr std::size_t kCount = 100'000;
  std::vector<float> values(kCount);
  std::vector<SafetensorsTensorView> views;
  for (std::size_t i = 0; i < kCount; ++i) {
    values[i] = static_cast<float>(i);
    views.push_back({"t" + std::to_string(i), DType::kF32, {1}, std::as_bytes(std::span(&values[i], 1))});
  }
  safetensors_write(path, views);
  const SafetensorsFile file(path);
  ASSERT_EQ(file.entries().size(), kCount);
  EXPECT_EQ(file.read_f32("t99999").data, (std::vector<float>{99999.0f}));
  EXPECT_EQ(file.read_f32("t0").data, (std::vector<float>{0.0f}));
}

TEST(Safetensors, ReadsTheReferenceFixtures) {
  const SafetensorsFile file(test::fixture_path("refs/randn.safetensors"));
  EXPECT_FALSE(file.entries().empty());
  for (const auto& entry : file.entries()) EXPECT_EQ(entry.dtype, DType::kF32) << entry.name;
}

}  // namespace
}  // namespace websd
