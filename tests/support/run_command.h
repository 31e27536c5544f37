// Runs the built websd binary as a user would, capturing exit status, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace websd::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Path of the websd executable under test.
std::string websd_binary();
// Runs websd with `args` (no shell interpretation), optional `stdin_text`.
CommandResult run_websd(const std::vector<std::string>& args, const std::string& stdin_text = "");

}  // namespace websd::test
