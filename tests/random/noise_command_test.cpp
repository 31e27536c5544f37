// `websd noise` as a user runs it: the file it writes holds torch's noise, and bad input gives one
// error line, a non-zero exit and no output file (an existing one is left as it was).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/bit_cast.h"
#include "io/safetensors_reader.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void expect_same_bits(const HostTensor& got, const HostTensor& want) {
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_EQ(got.data.size(), want.data.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < got.data.size(); ++i) {
    mismatches += websd::bit_cast<std::uint32_t>(got.data[i]) != websd::bit_cast<std::uint32_t>(want.data[i]);
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(NoiseCommand, WritesTorchNoiseForFixtureKeys) {
  const SafetensorsFile fixture(fixture_path("refs/randn.safetensors"));
  const std::string dir = make_temp_dir("noise");
  const struct {
    std::string seed, shape, key;
  } cases[] = {{"42", "1,4,64,64", "randn.42.1x4x64x64"}, {"0", "2,3", "randn.0.2x3"}};
  for (const auto& c : cases) {
    const std::string out = dir + "/" + c.key + ".safetensors";
    const auto result = run_websd({"noise", "--seed", c.seed, "--shape", c.shape, "--out", out});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const SafetensorsFile written(out);
    ASSERT_EQ(written.entries().size(), 1u);
    EXPECT_EQ(written.at("noise").dtype, DType::kF32);
    expect_same_bits(written.read_f32("noise"), fixture.read_f32(c.key));
  }
}

struct BadNoiseCase {
  std::string name;
  std::vector<std::string> args;  // appended after "noise"
  int exit_code;                  // 1: rejected value, 2: command-line usage
  std::string mentions;
};

class NoiseCommandRejects : public ::testing::TestWithParam<BadNoiseCase> {};

TEST_P(NoiseCommandRejects, WithOneLineAndNoFile) {
  const BadNoiseCase& bad = GetParam();
  const std::string out = make_temp_dir("noise-bad") + "/noise.safetensors";
  std::vector<std::string> args = {"noise"};
  args.insert(args.end(), bad.args.begin(), bad.args.end());
  for (std::string& arg : args) {
    if (arg == "OUT") arg = out;
  }
  const auto result = run_websd(args);
  EXPECT_EQ(result.exit_code, bad.exit_code) << result.err;
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find(bad.mentions), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_FALSE(std::filesystem::exists(out));
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, NoiseCommandRejects,
    ::testing::Values(BadNoiseCase{"LetterInShape", {"--seed", "1", "--shape", "1,a,4", "--out", "OUT"}, 1, "'a'"},
                      BadNoiseCase{"ZeroDimension", {"--seed", "1", "--shape", "1,0", "--out", "OUT"}, 1, "'0'"},
                      BadNoiseCase{"NegativeDimension", {"--seed", "1", "--shape", "4,-2", "--out", "OUT"}, 1, "'-2'"},
                      BadNoiseCase{"EmptyDimension", {"--seed", "1", "--shape", "4,,4", "--out", "OUT"}, 1, "''"},
                      BadNoiseCase{"TrailingComma", {"--seed", "1", "--shape", "4,4,", "--out", "OUT"}, 1, "''"},
                      BadNoiseCase{
                          "TooManyElements", {"--seed", "1", "--shape", "65536,65536", "--out", "OUT"}, 1, "2^31"},
                      BadNoiseCase{"NegativeSeed", {"--seed=-5", "--shape", "4", "--out", "OUT"}, 1, "'-5'"},
                      BadNoiseCase{"SeedAbove64Bits",
                                   {"--seed", "18446744073709551616", "--shape", "4", "--out", "OUT"},
                                   1,
                                   "18446744073709551616"},
                      BadNoiseCase{"FractionalSeed", {"--seed", "1.5", "--shape", "4", "--out", "OUT"}, 1, "'1.5'"},
                      BadNoiseCase{"MissingOut", {"--seed", "1", "--shape", "4"}, 2, "--out"},
                      BadNoiseCase{"MissingShape", {"--seed", "1", "--out", "OUT"}, 2, "--shape"}),
    [](const ::testing::TestParamInfo<BadNoiseCase>& info) { return info.param.name; });

TEST(NoiseCommand, FailureLeavesExistingOutputUntouched) {
  const std::string out = make_temp_dir("noise-keep") + "/noise.safetensors";
  { std::ofstream(out, std::ios::binary) << "previous content"; }
  const auto result = run_websd({"noise", "--seed", "3", "--shape", "1,x", "--out", out});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_EQ(read_text(out), "previous content");
}

TEST(NoiseCommand, UnwritableOutputIsOneErrorLine) {
  const std::string out = make_temp_dir("noise-missing-dir") + "/no/such/dir/noise.safetensors";
  const auto result = run_websd({"noise", "--seed", "3", "--shape", "4", "--out", out});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace websd::test
