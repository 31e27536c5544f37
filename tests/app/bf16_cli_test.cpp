// `--dtype bf16` as a user meets it (issue 22): generate and build say which type convolutions and
// linear layers compute in, a CPU without native bf16 keeps f32 and says why (its image is then the f32 one, byte
// for byte), a bf16 build's launch lists carry the choice, and the option is refused where it means
// nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "support/cli_checks.h"
#include "support/fixtures.h"
#include "targets/cpu/runtime/bf16_attention.h"
#include "targets/cpu/runtime/bf16_support.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

const char* const kNoBf16 =
    "this CPU has no native bf16 (AVX512-BF16 or AMX), so convolutions, linear layers and attention compute in "
    "f32";
// What a CPU with native bf16 says: attention in bf16 too where that is the faster (bf16_attention.h).
std::string bf16_message() {
  return cpu::bf16_attention_pays() ? "convolutions, linear layers and attention compute in bf16 (f32 accumulation)"
                                    : "convolutions and linear layers compute in bf16 (f32 accumulation); attention "
                                      "in f32, which is faster on this CPU";
}

TEST(Bf16Cli, GenerateSaysWhatItComputesIn) {
  const fs::path dir = fs::temp_directory_path() / "websd-bf16-cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const CommandResult f32 =
      run_websd(generate_args(fixture_model(), (dir / "f32.png").string(), {"--no-weight-cache"}));
  ASSERT_EQ(f32.exit_code, 0) << f32.err;
  const CommandResult bf16 =
      run_websd(generate_args(fixture_model(), (dir / "bf16.png").string(), {"--dtype", "bf16", "--no-weight-cache"}));
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  if (cpu::onednn_bf16_available()) {
    EXPECT_NE(bf16.err.find(bf16_message()), std::string::npos) << bf16.err;
    EXPECT_EQ(f32.err.find(bf16_message()), std::string::npos) << f32.err;
  } else {
    EXPECT_NE(bf16.err.find(kNoBf16), std::string::npos) << bf16.err;
    EXPECT_EQ(read_all((dir / "bf16.png").string()), read_all((dir / "f32.png").string()));
  }
  fs::remove_all(dir);
}

TEST(Bf16Cli, ABf16CpuBuildRecordsTheChoiceInItsLaunchLists) {
  const fs::path dir = fs::temp_directory_path() / "websd-bf16-build";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const CommandResult built = run_websd(
      {"build", "--model", fixture_model(), "--target", "cpu", "--dtype", "bf16", "--out", (dir / "art").string()});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const std::string manifest = read_all((dir / "art" / "manifest.json").string());
  ASSERT_FALSE(manifest.empty());
  // Launch attributes are typed in the manifest: "compute": {"string": "bf16"}.
  const bool marked = std::regex_search(manifest, std::regex("\"compute\":\\s*\\{\\s*\"string\":\\s*\"bf16\""));
  EXPECT_EQ(marked, cpu::onednn_bf16_available());
  EXPECT_NE(built.err.find(cpu::onednn_bf16_available() ? bf16_message() : kNoBf16), std::string::npos) << built.err;
  const CommandResult ran = run_websd({"generate", "--artifact", (dir / "art").string(), "--prompt", "a boat",
                                       "--steps", "1", "--seed", "1", "--out", (dir / "out.png").string()});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_TRUE(fs::exists(dir / "out.png"));
  fs::remove_all(dir);
}

TEST(Bf16Cli, AnUnknownTypeOrADtypeForAnArtifactIsOneErrorLine) {
  const fs::path out = fs::temp_directory_path() / "websd-bf16-refused.png";
  expect_error(run_websd(generate_args(fixture_model(), out.string(), {"--dtype", "fp8"})),
               {"--dtype fp8: unknown compute type (use f32, f16 or bf16)"});
  expect_error(run_websd({"generate", "--artifact", fixture_model(), "--prompt", "a boat", "--dtype", "bf16", "--out",
                          out.string()}),
               {"--dtype applies to --model; an artifact computes as it was built"});
  expect_error(run_websd({"bench", "--artifact", fixture_model(), "--dtype", "bf16"}),
               {"--dtype applies to --model; an artifact computes as it was built"});
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace websd::test
