#include "support/run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/fixtures.h"

extern char** environ;

namespace websd::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace

std::string websd_binary() { return WEBSD_BINARY_PATH; }

CommandResult run_websd(const std::vector<std::string>& args, const std::string& stdin_text,
                        std::chrono::milliseconds deadline) {
  // Files rather than pipes: no deadlock whatever the child prints.
  const std::string dir = make_temp_dir("run");
  const std::string in_path = dir + "/stdin", out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::ofstream(in_path, std::ios::binary) << stdin_text;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<std::string> argv_storage = {websd_binary()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) throw std::runtime_error("cannot spawn " + websd_binary());
  int status = 0;
  rusage usage{};
  CommandResult result;
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    const pid_t done = wait4(pid, &status, deadline.count() > 0 ? WNOHANG : 0, &usage);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (done == 0 && std::chrono::steady_clock::now() >= end) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      result.timed_out = true;
      break;
    }
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  result.peak_rss_bytes = usage.ru_maxrss * 1024L;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

std::string build_webgpu_fixture_artifact(const std::string& name, const std::vector<std::string>& extra) {
  const std::string dir = make_temp_dir("webgpu-fixture") + "/" + name;
  std::vector<std::string> args = {"build", "--model", fixture_path("tiny-sd15/model"), "--target", "webgpu",
                                   "--out", dir};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult built = run_websd(args);
  if (built.exit_code != 0) throw std::runtime_error("websd build --target webgpu failed: " + built.err);
  return dir;
}

}  // namespace websd::test
