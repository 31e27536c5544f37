// Runs the built websd binary as a user would, capturing exit status, stdout and stderr.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace websd::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  bool timed_out = false;   // killed (SIGKILL) at the deadline
  long peak_rss_bytes = 0;  // the command's peak resident memory (getrusage's ru_maxrss)
};

// Path of the websd executable under test.
std::string websd_binary();
// Runs websd with `args` (no shell interpretation), optional `stdin_text`. With a `deadline` (> 0),
// a command still running after it is killed and reported as timed_out: for inputs that could hang.
CommandResult run_websd(const std::vector<std::string>& args, const std::string& stdin_text = "",
                        std::chrono::milliseconds deadline = {});
// `websd build --model <fixture tiny-sd15> --target webgpu --out <a new temporary folder>/<name>
// <extra>`; the artifact's folder. Throws std::runtime_error with websd's stderr when it fails.
std::string build_webgpu_fixture_artifact(const std::string& name, const std::vector<std::string>& extra = {});

}  // namespace websd::test
