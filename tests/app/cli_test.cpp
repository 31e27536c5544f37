// The CLI as a user meets it: bad usage gives one error line and a non-zero exit.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/run_command.h"

namespace websd::test {
namespace {

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST(Cli, VersionPrints) {
  const auto result = run_websd({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find('.'), std::string::npos);
}

TEST(Cli, NoSubcommandIsOneErrorLine) {
  const auto result = run_websd({});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
}

TEST(Cli, UnknownSubcommandIsOneErrorLine) {
  const auto result = run_websd({"frobnicate"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(line_count(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("frobnicate"), std::string::npos) << result.err;
}

TEST(Cli, HelpListsCommands) {
  const auto result = run_websd({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("Subcommands"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace websd::test
