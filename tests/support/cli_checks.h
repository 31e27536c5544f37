// What the CLI tests that run the real websd share: the fixture model, the error-line check, a
// generate command line, and running websd in the background to interrupt it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "support/run_command.h"

namespace websd::test {

// The tiny SD 1.5 fixture, and a private copy of it that a test may change.
std::string fixture_model();
std::string copy_fixture(const std::string& tag);

// Exit status `code` (1: bad input, 2: usage), within the deadline if one was given, and one error
// line "websd: error: ..." ending stderr (progress lines may precede it) that holds every part and is
// never an internal error.
void expect_error(const CommandResult& result, std::initializer_list<std::string> parts, int code = 1);

// `websd generate` of the model with one step, seed 1, and `more` options.
std::vector<std::string> generate_args(const std::string& model, const std::string& out,
                                       std::initializer_list<std::string> more = {});

std::string read_all(const std::string& path);

// run_websd under an address-space limit of `bytes` (RLIMIT_AS, as `ulimit -v` sets it), which
// websd's memory check honours (io/system_memory.h).
CommandResult run_websd_with_address_limit(const std::vector<std::string>& args, std::uint64_t bytes);

// Starts websd with `args` in the background (its output discarded); returns its pid.
pid_t spawn_websd(const std::vector<std::string>& args);
// Waits for a process spawn_websd started; its exit status, or 128 + the signal that ended it.
int wait_websd(pid_t pid);
// Runs websd in the background, sends `signal` once `ready` says the command is under way (or after
// 60 s), and returns the exit status.
int interrupted_run(const std::vector<std::string>& args, const std::function<bool()>& ready, int signal);

}  // namespace websd::test
