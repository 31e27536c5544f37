#include "support/cli_checks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/fixtures.h"

namespace websd::test {
namespace {

// In a forked child: replaces it with websd running `args`, its output going to the files `out` and
// `err`.
[[noreturn]] void exec_websd(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  const std::string binary = websd_binary();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), STDOUT_FILENO);
  ::dup2(::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), STDERR_FILENO);
  ::execv(binary.c_str(), argv.data());
  ::_exit(127);
}

}  // namespace

std::string fixture_model() { return fixture_path("tiny-sd15/model"); }

std::string copy_fixture(const std::string& tag) { return copy_fixture("tiny-sd15/model", tag); }

void expect_error(const CommandResult& result, std::initializer_list<std::string> parts, int code) {
  EXPECT_FALSE(result.timed_out) << "still running at the deadline: " << result.err;
  EXPECT_EQ(result.exit_code, code) << result.err << result.out;
  const std::size_t start = result.err.rfind("websd: error: ");
  ASSERT_NE(start, std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("websd: error: "), start) << "more than one error line: " << result.err;
  const std::string line = result.err.substr(start);
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << "not one line: " << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
  for (const auto& part : parts) EXPECT_NE(line.find(part), std::string::npos) << line << "\nlacks: " << part;
}

std::vector<std::string> generate_args(const std::string& model, const std::string& out,
                                       std::initializer_list<std::string> more) {
  std::vector<std::string> args = {"generate", "--model", model, "--prompt", "a boat", "--steps",
                                   "1",        "--seed",  "1",   "--out",    out};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

CommandResult run_websd_with_address_limit(const std::vector<std::string>& args, std::uint64_t bytes) {
  const std::string dir = make_temp_dir("limited");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit limit{bytes, bytes};
    ::setrlimit(RLIMIT_AS, &limit);
    exec_websd(args, dir + "/stdout", dir + "/stderr");
  }
  CommandResult result;
  result.exit_code = wait_websd(pid);
  result.out = read_all(dir + "/stdout");
  result.err = read_all(dir + "/stderr");
  return result;
}

pid_t spawn_websd(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) exec_websd(args, "/dev/null", "/dev/null");
  return pid;
}

int wait_websd(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int interrupted_run(const std::vector<std::string>& args, const std::function<bool()>& ready, int signal) {
  const pid_t pid = spawn_websd(args);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, signal);
  return wait_websd(pid);
}

}  // namespace websd::test
